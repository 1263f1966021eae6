/**
 * `npm run demo` (README, the main job): finishes in under 3 minutes, prints each worktree's
 * answer, and leaves no container, volume or network behind. Runs the real script with its own
 * state directory, so it also takes the `yard doctor --fix` path on this host.
 */
import {expect} from 'chai'
import {spawn} from 'node:child_process'

import {podman, sweep} from '../support/podman.js'
import {cleanupTemp, tempDir} from '../support/repo.js'
import {projectRoot} from '../support/yard.js'

const projects = ['yard-demo', 'yard-demo-feat', 'yard-demo-fix']

function leftovers(): string[] {
  const found: string[] = []
  for (const project of projects) {
    const filter = `label=com.docker.compose.project=${project}`
    found.push(...podman('ps', '--all', '--filter', filter, '--format', '{{.Names}}').split('\n'))
    found.push(...podman('volume', 'ls', '--filter', filter, '--format', '{{.Name}}').split('\n'))
    found.push(...podman('network', 'ls', '--filter', filter, '--format', '{{.Name}}').split('\n'))
  }

  return found.filter(Boolean)
}

describe('npm run demo (README)', function () {
  this.timeout(400_000)

  before(() => sweep('yard-demo'))

  after(() => {
    sweep('yard-demo')
    cleanupTemp()
  })

  it('runs main, feat and fix at once, prints each answer, and leaves nothing behind, in under 3 minutes', async () => {
    const env: NodeJS.ProcessEnv = {...process.env, YARD_STATE_DIR: tempDir('yard-demo-state')}
    for (const key of ['CONTAINERS_CONF', 'NODE_ENV', 'YARD_WORKTREE', 'WT_OFFSET', 'YARD_PREFIX']) delete env[key]
    // The build the demo may run is set-up, not the demo: time it apart (acceptance 8).
    const build = await runScript(['npm', 'run', '--silent', 'build'], env)
    expect(build.code, build.output).to.equal(0)
    const started = Date.now()
    const demo = await runScript(['npm', 'run', 'demo'], env)
    const seconds = (Date.now() - started) / 1000
    expect(demo.code, demo.output).to.equal(0)
    expect(seconds, 'demo wall-clock seconds').to.be.below(180)
    for (const name of ['main', 'feat', 'fix'])
      expect(demo.output).to.match(
        new RegExp(String.raw`^${name} +http://127\.0\.0\.1:\d+/  →  hello from ${name}$`, 'm'),
      )
    expect(demo.output).to.match(/^main +still answers, visits\.txt: main was here/m)
    expect(demo.output).to.match(/^feat +still answers, visits\.txt: feat was here/m)
    expect(leftovers()).to.deep.equal([])
  })
})

async function runScript(argv: string[], env: NodeJS.ProcessEnv): Promise<{code: number | null; output: string}> {
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), {cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe']})
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    child.on('close', (code) => resolve({code, output}))
  })
}
