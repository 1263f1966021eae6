/**
 * docs/plugins.md takes a newcomer from an empty directory to a linked, working backend, and
 * examples/procfile-stack follows it step by step (DESIGN.md §7): the guide's files are the
 * example's files, and doing what the guide says in an empty directory gives a backend that
 * yard lists and runs.
 */
import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import type {BackendEntry} from '../../src/core/registry/registry.js'
import type {StackContainer} from '../../src/sdk/stack.js'

import {
  freePortBase,
  freshHomes,
  groupAlive,
  httpText,
  killRecorded,
  recordedPids,
  yardIn,
} from '../examples/support.js'
import {builtPackage} from '../support/built-package.js'
import {projectRoot} from '../support/oclif-config.js'
import {cleanupTemp, makeRepo, tempDir} from '../support/repo.js'

const guide = readFileSync(path.join(projectRoot, 'docs', 'plugins.md'), 'utf8')
const exampleDir = path.join(projectRoot, 'examples', 'procfile-stack')

/** The guide's code blocks that name a file (```lang file=PATH), by path. */
function guideFiles(): Map<string, string> {
  const files = new Map<string, string>()
  for (const match of guide.matchAll(/^```\S* file=(\S+)\n([\s\S]*?)^```$/gm)) files.set(match[1], match[2])
  return files
}

/** The files the guide's step 3 says to copy from the repository. */
function copiedFiles(): string[] {
  const step = guide.slice(guide.indexOf('### 3.'), guide.indexOf('### 4.'))
  return [...step.matchAll(/^- `(src\/[\w.-]+)`/gm)].map((match) => match[1])
}

describe('docs/plugins.md, the authoring guide (DESIGN.md §7)', function () {
  this.timeout(180_000)

  afterEach(() => {
    killRecorded()
    cleanupTemp()
  })

  it('shows the example’s files as they are, and names the rest of its sources to copy', () => {
    const files = guideFiles()
    const exampleSources = [
      'package.json',
      '.npmrc',
      'tsconfig.json',
      ...readdirSync(path.join(exampleDir, 'src')).map((file) => `src/${file}`),
    ]
    for (const file of exampleSources.filter((name) => files.has(name))) {
      expect(files.get(file), file).to.equal(readFileSync(path.join(exampleDir, file), 'utf8'))
    }

    const covered = [...exampleSources.filter((name) => files.has(name)), ...copiedFiles()].sort()
    expect(covered).to.deep.equal([...exampleSources].sort())
    expect(copiedFiles()).to.deep.equal(['src/procfile.ts', 'src/processes.ts'])
  })

  it('done step by step in an empty directory, gives a backend yard links, lists and runs', async function () {
    this.timeout(300_000)
    const root = await builtPackage()
    const homes = freshHomes()
    const files = guideFiles()

    // Steps 1–4: the files, the SDK from the built package instead of the registry.
    const plugin = path.join(tempDir('yard-guide'), 'procfile-stack')
    mkdirSync(path.join(plugin, 'src'), {recursive: true})
    for (const file of ['package.json', '.npmrc', 'tsconfig.json', 'src/index.ts', 'src/stack.ts'])
      writeFileSync(path.join(plugin, file), files.get(file)!)
    for (const file of copiedFiles()) copyFileSync(path.join(exampleDir, file), path.join(plugin, file))
    const manifest = JSON.parse(files.get('package.json')!) as {dependencies: Record<string, string>}
    manifest.dependencies['@yard-dev/cli'] = `file:${root}`
    writeFileSync(path.join(plugin, 'package.json'), JSON.stringify(manifest, null, 2))
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], {cwd: plugin, stdio: 'pipe'})
    // Step 5.
    execFileSync('npm', ['run', 'build'], {cwd: plugin, stdio: 'pipe'})
    // Step 6.
    yardIn(root, homes, ['plugins', 'link', '.'], {cwd: plugin})
    const entries = yardIn(root, homes, ['backends', '--json']).json as BackendEntry[]
    expect(entries.find((entry) => entry.id === 'procfile-stack')).to.deep.equal({
      id: 'procfile-stack',
      kind: 'stack',
      plugin: 'procfile-stack',
      version: '1.0.0',
      contract: 1,
      status: 'ok',
    })

    // Step 7, on a free port instead of 3000.
    const base = await freePortBase()
    const repo = makeRepo({
      'yard.toml': files.get('yard.toml')!.replace('APP_PORT = 3000', `APP_PORT = ${base}`),
      Procfile: files.get('Procfile')!,
      'server.mjs': files.get('server.mjs')!,
    })
    yardIn(root, homes, ['up'], {cwd: repo})
    expect(await httpText(base)).to.equal('web of main')
    const rows = yardIn(root, homes, ['ps', '--json'], {cwd: repo}).json as StackContainer[]
    expect(rows.map((row) => [row.service, row.state, row.ports])).to.deep.equal([
      ['web', 'running', [{host: base, container: base}]],
    ])
    yardIn(root, homes, ['exec', '--', 'true'], {cwd: repo, expected: 125})
    const pids = recordedPids(homes.state).app
    yardIn(root, homes, ['down'], {cwd: repo})
    for (const pid of pids) expect(groupAlive(pid), `process group ${pid}`).to.equal(false)
  })
})
