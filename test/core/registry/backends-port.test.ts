import {expect} from 'chai'
import {existsSync, readFileSync} from 'node:fs'
import path from 'node:path'

import type {Backends} from '../../../src/core/registry/backends.js'
import type {CacheBackend} from '../../../src/sdk/cache.js'
import type {MachineBackend, MachineSpec} from '../../../src/sdk/machine.js'
import type {SandboxAttachResult, SandboxBackend, SandboxRecord, SandboxSpec} from '../../../src/sdk/sandbox.js'
import type {StackBackend, StackSpec} from '../../../src/sdk/stack.js'
import type {Target} from '../../../src/sdk/target.js'

import {createContext, type YardContext} from '../../../src/core/kernel/context.js'
import {createSandbox} from '../../../src/core/sandbox/create.js'
import {stackUp} from '../../../src/core/stack/stack.js'
import {addWorktree, cleanupTemp, makeRepo, tempDir} from '../../support/repo.js'

const vectors = JSON.parse(
  readFileSync(new URL('../../../../shared/vectors/offsets.json', import.meta.url), 'utf8'),
) as {cases: Array<{name: string; offset: number}>}
const offsetOf = (name: string) => vectors.cases.find((entry) => entry.name === name)!.offset

/** An object that answers `members` and throws on any other member a use case reaches for. */
function strict<T extends object>(label: string, members: Partial<T>): T {
  return new Proxy(members, {
    get(target, property) {
      if (property in target || typeof property === 'symbol' || property === 'then')
        return (target as Record<string | symbol, unknown>)[property]
      throw new Error(`${label}.${String(property)} was not expected`)
    },
  }) as T
}

interface Asked {
  kind: string
  id: string
  context: YardContext
  options?: unknown
}

/** A `Backends` port that hands out the given fakes and records what was asked of it. */
function fakePort(
  fakes: {machine?: MachineBackend; stack?: StackBackend; sandbox?: SandboxBackend},
  asked: Asked[],
): Backends {
  const give =
    <B>(kind: string, backend: B | undefined) =>
    async (context: YardContext, id: string, options?: unknown) => {
      asked.push({kind, id, context, options})
      if (!backend) throw new Error(`no ${kind} backend was expected`)
      return backend
    }

  return {
    machine: give('machine', fakes.machine),
    stack: give('stack', fakes.stack),
    sandbox: give('sandbox', fakes.sandbox),
    cache: give('cache', strict<CacheBackend>('cache', {kind: 'cache', id: 'fake-cache'})),
    has: async () => true,
    ids: async () => [],
    entries: async () => [],
  }
}

describe('the Backends port: use cases run on fakes of it (core/registry/backends.ts)', function () {
  this.timeout(30_000)

  afterEach(() => cleanupTemp())

  const contextIn = (repo: string): YardContext =>
    createContext({
      cwd: repo,
      env: {
        ...process.env,
        YARD_STATE_DIR: tempDir('yard-state'),
        YARD_WORKTREE: undefined,
        WT_OFFSET: undefined,
        YARD_PREFIX: undefined,
      },
      warn() {},
    })

  describe('createSandbox', () => {
    function fakeSandboxes(log: string[], options: {attach?: () => Promise<SandboxAttachResult>} = {}): SandboxBackend {
      return strict<SandboxBackend>('sandbox', {
        kind: 'sandbox',
        id: 'fake-sandbox',
        runtimes: ['kubernetes'],
        // No warm pools: create checks for the optional capability on every runtime.
        pool: undefined,
        list: async () => [],
        get: async () => undefined,
        async create(target: Target, spec: SandboxSpec) {
          log.push(
            `create ${target.project} offset ${target.offset} (${target.offsetSource}) image ${spec.image} branch ${spec.branch} repos ${spec.repos.map((repo) => `${repo.slot}=${repo.url}`).join(',')}`,
          )
        },
        async attach(sandbox: SandboxRecord, request) {
          log.push(`attach ${sandbox.project} ${request.branch}`)
          return options.attach ? options.attach() : {branch: request.branch, slots: [], stale: {}}
        },
        async remove(sandbox: SandboxRecord) {
          log.push(`remove ${sandbox.project}`)
        },
      })
    }

    it("creates the sandbox with its identity (DESIGN.md §3.4: the name's hash offset) and attaches its branch", async () => {
      const repo = makeRepo({'yard.toml': '[project]\nprefix = "portfake"\n\n[ports]\nWEB_PORT = 3000\n'})
      const log: string[] = []
      const asked: Asked[] = []
      const context = contextIn(repo)
      const result = await createSandbox(context, fakePort({sandbox: fakeSandboxes(log)}, asked), {
        name: 'feat',
        repos: ['https://example.com/app.git'],
        runtime: 'kubernetes',
        image: 'localhost/yard-fake:1',
      })

      expect(log).to.deep.equal([
        `create portfake-feat offset ${offsetOf('feat')} (hash) image localhost/yard-fake:1 branch wt/feat repos app=https://example.com/app.git`,
        'attach portfake-feat wt/feat',
      ])
      expect(result).to.deep.include({
        name: 'feat',
        project: 'portfake-feat',
        runtime: 'kubernetes',
        offset: offsetOf('feat'),
        offsetSource: 'hash',
      })
      expect(result.ports).to.deep.equal({WEB_PORT: 3000 + offsetOf('feat')})
      // The port is asked with the use case's own context, and the sandbox backend with [cluster].
      const sandboxAsk = asked.find((ask) => ask.kind === 'sandbox')!
      expect(sandboxAsk.context).to.equal(context)
      expect(sandboxAsk.options).to.have.nested.property('cluster.namespace')
    })

    it('removes the pod it made and keeps no pin when the attach fails', async () => {
      const repo = makeRepo({'yard.toml': '[project]\nprefix = "portfake"\n'})
      const log: string[] = []
      const failing = fakeSandboxes(log, {
        async attach() {
          throw new Error('git in the pod failed')
        },
      })
      const failure = await createSandbox(contextIn(repo), fakePort({sandbox: failing}, []), {
        name: 'alpha',
        repos: ['https://example.com/app.git'],
        runtime: 'kubernetes',
        image: 'localhost/yard-fake:1',
      }).catch((error: Error) => error)

      expect(failure).to.be.instanceOf(Error).with.property('message', 'git in the pod failed')
      expect(log).to.deep.equal([
        `create portfake-alpha offset ${offsetOf('alpha')} (hash) image localhost/yard-fake:1 branch wt/alpha repos app=https://example.com/app.git`,
        'attach portfake-alpha wt/alpha',
        'remove portfake-alpha',
      ])
      expect(existsSync(path.join(repo, 'yard.local.toml'))).to.equal(false)
    })
  })

  describe('stackUp', () => {
    function fakeMachine(log: string[]): MachineBackend {
      let running = false
      return strict<MachineBackend>('machine', {
        kind: 'machine',
        id: 'fake-machine',
        // Optional capabilities this machine lacks: one machine per project, no VMs of its own.
        exclusive: undefined,
        worktreeMachines: undefined,
        async status(spec: MachineSpec) {
          return {
            backend: 'fake-machine',
            name: spec.name,
            state: running ? 'running' : 'absent',
            socket: null,
            mounts: [],
            cpus: null,
            memoryMiB: null,
            diskGiB: null,
          }
        },
        async init(spec: MachineSpec) {
          log.push(`machine init ${spec.name}`)
        },
        async start(spec: MachineSpec) {
          log.push(`machine start ${spec.name}`)
          running = true
        },
        socketEnv: async () => (running ? {CONTAINER_HOST: 'unix:///fake.sock'} : null),
      })
    }

    function fakeStack(log: string[]): StackBackend {
      return strict<StackBackend>('stack', {
        kind: 'stack',
        id: 'fake-stack',
        box: undefined,
        plan: undefined,
        async up(target: Target, spec: StackSpec) {
          log.push(
            `up ${target.project} offset ${target.offset} files ${spec.files.map((file) => path.basename(file)).join(',')} WEB_PORT=${spec.env.WEB_PORT}`,
          )
        },
      })
    }

    it("starts the machine, then brings the worktree's stack up with its identity and the machine's socket", async () => {
      const repo = makeRepo({
        'yard.toml':
          '[project]\nprefix = "portfake"\n\n[machine]\nbackend = "fake-machine"\n\n[stack]\nbackend = "fake-stack"\n\n[ports]\nWEB_PORT = 3000\n',
        'compose.yaml': 'services:\n  web:\n    image: none\n',
      })
      addWorktree(repo, 'feat')
      const log: string[] = []
      const asked: Asked[] = []
      const outcome = await stackUp(
        contextIn(repo),
        fakePort({machine: fakeMachine(log), stack: fakeStack(log)}, asked),
        'feat',
      )

      expect(outcome).to.deep.include({boxOnly: false, gone: []})
      expect(outcome.target).to.deep.include({project: 'portfake-feat', offset: offsetOf('feat')})
      expect(log).to.have.length(3)
      expect(log[0]).to.match(/^machine init /)
      expect(log[1]).to.match(/^machine start /)
      expect(log[2]).to.equal(
        `up portfake-feat offset ${offsetOf('feat')} files compose.yaml WEB_PORT=${3000 + offsetOf('feat')}`,
      )
      expect(asked.map((ask) => `${ask.kind} ${ask.id}`)).to.deep.equal(['machine fake-machine', 'stack fake-stack'])
      expect(asked[1].options).to.deep.equal({socketEnv: {CONTAINER_HOST: 'unix:///fake.sock'}})
    })
  })
})
