/**
 * The dashboard on this process's terminal (for tmux tests): `runDashboard` as `yard dashboard`
 * runs it — alternate screen, `e` and `l` handing the terminal over through core — but over the
 * rows of dashboard-memory.ts. Prints `exit=CODE` when it ends.
 * Usage: node --import tsx test/support/dashboard-pane.tsx [--empty-cluster] [--fade-ms N]
 */
import {createContext} from '../../src/core/kernel/context.js'
import {backendsOf} from '../../src/core/registry/backends.js'
import {loadRegistry} from '../../src/core/registry/registry.js'
import {runDashboard} from '../../src/tui/dashboard-run.js'
import {memoryServices} from './dashboard-memory.js'
import {testConfig} from './yard.js'

const argv = process.argv.slice(2)
const fade = argv.indexOf('--fade-ms')
const {services} = memoryServices({emptyCluster: argv.includes('--empty-cluster')})
const code = await runDashboard({
  context: createContext(),
  backends: backendsOf(await loadRegistry(await testConfig())),
  mode: 'local',
  services,
  statusFadeMs: fade === -1 ? undefined : Number(argv[fade + 1]),
})
process.stdout.write(`exit=${code}\n`)
process.exit(code)
