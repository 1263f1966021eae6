// Starts `sh -c 'sleep 60'` through ProcessRunner with a budget (its own process group), prints
// the group's id, then waits to be ended: by a signal (the test sends it), or by
// `process.exit(130)` after SIGUSR2, as a second Ctrl-C in kernel/interrupt.ts does.
import {ProcessRunner} from '../../src/sdk/process.js'

process.on('SIGUSR2', () => process.exit(130))
const runner = new ProcessRunner().withGroupReporter((pgid) => {
  if (pgid !== undefined) process.stdout.write(`${pgid}\n`)
})
await runner.run('sh', ['-c', 'sleep 60 & wait'], {timeoutMs: 120_000, allowFailure: true})
