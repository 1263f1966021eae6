import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

import {type BackendEntry, loadRegistry, Registry} from '../../../src/core/registry/registry.js'
import {InputError, OperationError, RefusedError} from '../../../src/sdk/errors.js'
import {type BackendFactory} from '../../../src/sdk/factory.js'
import {type MachineBackend} from '../../../src/sdk/machine.js'
import {ProcessRunner} from '../../../src/sdk/process.js'
import {type BackendContext} from '../../../src/sdk/target.js'
import {loadTestConfig, projectRoot} from '../../support/oclif-config.js'

const context: BackendContext = {runner: new ProcessRunner(), env: {}, stateDir: '/nonexistent/yard-state', warn() {}}

/** Entries of the fixture plugins only: the CLI's own built-ins come and go with the project. */
function fixtureEntries(registry: Registry): BackendEntry[] {
  return registry.entries().filter((entry) => entry.plugin.startsWith('yard-fixture-'))
}

const goodEntries: BackendEntry[] = [
  {id: 'fixture-machine', kind: 'machine', plugin: 'yard-fixture-good', version: '1.2.3', contract: 1, status: 'ok'},
  {id: 'fixture-stack', kind: 'stack', plugin: 'yard-fixture-good', version: '1.2.3', contract: '1.x', status: 'ok'},
]

function hookFailure(plugin: string, version: string, error: string): BackendEntry {
  return {id: null, kind: null, plugin, version, contract: null, status: 'broken', error}
}

describe('loadRegistry', () => {
  it('lists the backends of a good plugin as ok, with plugin, version and contract as declared', async () => {
    const registry = await loadRegistry(await loadTestConfig(['good']))
    expect(fixtureEntries(registry)).to.deep.equal(goodEntries)
  })

  it('reports each throwing hook as broken, also one that throws through this.error()', async () => {
    const registry = await loadRegistry(await loadTestConfig(['throwing', 'good']))
    expect(fixtureEntries(registry)).to.deep.equal([
      hookFailure('yard-fixture-throwing', '0.1.0', 'its yard:backends hook threw: license server unreachable'),
      hookFailure('yard-fixture-throwing', '0.1.0', 'its yard:backends hook threw: no licence key configured'),
      ...goodEntries,
    ])
  })

  it('reports malformed factories as broken, naming the field and the value at fault', async () => {
    const registry = await loadRegistry(await loadTestConfig(['malformed']))
    expect(fixtureEntries(registry)).to.deep.equal([
      {
        id: 'fixture-db',
        kind: 'database',
        plugin: 'yard-fixture-malformed',
        version: '0.2.0',
        contract: 1,
        status: 'broken',
        error: 'malformed backend factory: kind: must be one of machine, stack, cache, sandbox, got "database"',
      },
      {
        id: 'fixture-cache',
        kind: 'cache',
        plugin: 'yard-fixture-malformed',
        version: '0.2.0',
        contract: 1,
        status: 'broken',
        error: 'malformed backend factory: create: must be a function, got undefined',
      },
      {
        id: 'Fixture_Stack',
        kind: 'stack',
        plugin: 'yard-fixture-malformed',
        version: '0.2.0',
        contract: 'one',
        status: 'broken',
        error:
          'malformed backend factory: id: must be lowercase letters, digits and dashes, starting with a letter or digit, got "Fixture_Stack"; ' +
          'contract: must be a contract version such as 1, "1" or "1.x", got "one"',
      },
      hookFailure('yard-fixture-malformed', '0.2.0', 'backend factory #4 is null, not an object'),
      hookFailure(
        'yard-fixture-malformed',
        '0.2.0',
        'its yard:backends hook returned an object, not an array of backend factories',
      ),
    ])
    expect(registry.ids('cache')).to.not.include('fixture-cache')
  })

  it('reports a factory declaring contract major 2 as incompatible and does not offer it', async () => {
    const registry = await loadRegistry(await loadTestConfig(['future']))
    expect(fixtureEntries(registry)).to.deep.equal([
      {
        id: 'future-machine',
        kind: 'machine',
        plugin: 'yard-fixture-future',
        version: '2.0.0',
        contract: '2.0',
        status: 'incompatible',
        error:
          'implements backend contract 2, but this yard supports contract 1: install a release of yard-fixture-future made for contract 1, or a yard that supports contract 2',
      },
    ])
    expect(registry.factory('machine', 'future-machine')).to.equal(undefined)
  })

  it('keeps the first provider of a kind and id and reports a later one as a broken duplicate', async () => {
    const registry = await loadRegistry(await loadTestConfig(['good', 'duplicate']))
    expect(fixtureEntries(registry)).to.deep.equal([
      ...goodEntries,
      {
        id: 'fixture-machine',
        kind: 'machine',
        plugin: 'yard-fixture-duplicate',
        version: '0.0.1',
        contract: 1,
        status: 'broken',
        error: 'duplicate machine backend id "fixture-machine": already provided by yard-fixture-good',
      },
    ])
    const machine = await registry.create('machine', 'fixture-machine', context)
    expect((machine as MachineBackend & {context: unknown}).context).to.equal(context)
  })

  it('reports a hook file that exports no function as broken', async () => {
    const registry = await loadRegistry(await loadTestConfig(['no-function']))
    expect(fixtureEntries(registry)).to.deep.equal([
      hookFailure('yard-fixture-no-function', '0.0.1', 'its yard:backends hook exports no function'),
    ])
  })

  it('reports a hook that never answers as broken after the timeout and keeps the other plugins', async () => {
    const config = await loadTestConfig(['hanging', 'good'])
    const started = Date.now()
    const registry = await loadRegistry(config, {timeoutMs: 100})
    expect(Date.now() - started).to.be.below(5000)
    expect(fixtureEntries(registry)).to.deep.equal([
      hookFailure('yard-fixture-hanging', '0.0.1', 'its yard:backends hook did not answer within 100 ms'),
      ...goodEntries,
    ])
  })

  it('still reports a never-answering hook in a process of its own, where nothing else keeps Node alive', () => {
    // oclif's hook timer is unref'd: without a referenced timer Node drains its loop and exits 13.
    const moduleUrl = (file: string) => JSON.stringify(pathToFileURL(join(projectRoot, file)).href)
    const script = [
      `const {loadTestConfig} = await import(${moduleUrl('test/support/oclif-config.ts')})`,
      `const {loadRegistry} = await import(${moduleUrl('src/core/registry/registry.ts')})`,
      // 1 s, not 100 ms: a fresh process also transpiles the built-in hooks within the overall deadline (3 × timeout).
      `const registry = await loadRegistry(await loadTestConfig(['hanging']), {timeoutMs: 1000})`,
      `process.stdout.write(JSON.stringify(registry.entries().filter((entry) => entry.plugin.startsWith('yard-fixture-'))))`,
    ].join('\n')
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--no-warnings', '--input-type=module', '--eval', script],
      {
        cwd: projectRoot,
        env: {...process.env, NODE_ENV: 'test'},
        encoding: 'utf8',
        timeout: 30_000,
      },
    )
    expect(child.status, child.stderr).to.equal(0)
    expect(JSON.parse(child.stdout)).to.deep.equal([
      hookFailure('yard-fixture-hanging', '0.0.1', 'its yard:backends hook did not answer within 1000 ms'),
    ])
  })

  it('reports only the plugin whose hook module never finishes loading; the others still register', async () => {
    const config = await loadTestConfig(['stuck-import', 'good'])
    const registry = await loadRegistry(config, {timeoutMs: 100})
    const entries = fixtureEntries(registry)
    expect(entries.filter((entry) => entry.plugin === 'yard-fixture-stuck-import')).to.deep.equal([
      hookFailure('yard-fixture-stuck-import', '0.0.1', 'its yard:backends hook did not answer within 100 ms'),
    ])
    const good = entries.filter((entry) => entry.plugin === 'yard-fixture-good')
    expect(good.map((entry) => [entry.id, entry.status])).to.deep.equal([
      ['fixture-machine', 'ok'],
      ['fixture-stack', 'ok'],
    ])
    expect(registry.factory('machine', 'fixture-machine')).to.not.equal(undefined)
  })

  it('runs the hook once per Config and a new Config runs it again', async () => {
    const config = await loadTestConfig(['good'])
    let runs = 0
    const getPluginsList = config.getPluginsList.bind(config)
    config.getPluginsList = () => {
      runs += 1
      return getPluginsList()
    }

    const first = await loadRegistry(config)
    const second = await loadRegistry(config, {timeoutMs: 1})
    expect(second).to.equal(first)
    expect(runs).to.equal(1)
    expect(await loadRegistry(await loadTestConfig(['good']))).not.to.equal(first)
  })
})

describe('Registry', () => {
  function factory(fields: Partial<BackendFactory> & Pick<BackendFactory, 'create'>): BackendFactory {
    return {kind: 'machine', id: 'test-machine', contract: 1, ...fields}
  }

  function registryOf(factories: BackendFactory[]): Registry {
    return new Registry(
      factories.map((made) => ({
        entry: {
          id: made.id,
          kind: made.kind,
          plugin: 'yard-test-plugin',
          version: '1.0.0',
          contract: made.contract,
          status: 'ok' as const,
        },
        factory: made,
      })),
    )
  }

  it('offers ok factories by kind and id, sorted, and nothing for an unknown id', async () => {
    const registry = await loadRegistry(await loadTestConfig(['good', 'malformed']))
    expect(registry.factory('machine', 'fixture-machine')?.id).to.equal('fixture-machine')
    expect(registry.factory('stack', 'fixture-machine')).to.equal(undefined)
    expect(registry.factory('cache', 'fixture-cache')).to.equal(undefined)
    expect(registry.ids('stack').filter((id) => id.startsWith('fixture-'))).to.deep.equal(['fixture-stack'])
  })

  it('refuses an unknown id with exit 2, naming the id, the ids available and the config key', async () => {
    const registry = registryOf([
      factory({id: 'zeta-machine', create: () => ({}) as MachineBackend}),
      factory({id: 'alpha-machine', create: () => ({}) as MachineBackend}),
    ])
    const error = await registry.create('machine', 'podman', context).then(
      () => expect.fail('create resolved'),
      (error_: unknown) => error_,
    )
    expect(error).to.be.instanceOf(InputError)
    expect(error).to.include({
      code: 2,
      message: 'unknown machine backend "podman"',
      why: 'the machine backends available are: alpha-machine, zeta-machine',
      fix: 'set [machine] backend in yard.toml to one of: alpha-machine, zeta-machine, or install the plugin that provides "podman" (yard plugins install <package>); yard backends lists what is installed',
    })
  })

  it('names where an unknown id was set: the environment variable that set it, or the file', async () => {
    const registry = registryOf([])
    const fromEnv = await registry
      .create('machine', 'bogus', context, 'env:YARD_MACHINE_BACKEND')
      .catch((error: unknown) => error)
    expect(fromEnv).to.include({
      code: 2,
      message: 'unknown machine backend "bogus" from YARD_MACHINE_BACKEND',
      fix: 'set the environment variable YARD_MACHINE_BACKEND to the id of an installed machine backend (or unset it), or install the plugin that provides "bogus" (yard plugins install <package>); yard backends lists what is installed',
    })
    const fromLocal = await registry
      .create('machine', 'bogus', context, 'yard.local.toml')
      .catch((error: unknown) => error)
    expect((fromLocal as InputError).fix).to.match(/^set \[machine\] backend in yard\.local\.toml to /)
  })

  it('names [cluster] backend for sandboxes and says when no backend of the kind is installed', async () => {
    const error = await registryOf([])
      .create('sandbox', 'k8s', context)
      .catch((error_: unknown) => error_)
    expect(error).to.include({
      code: 2,
      why: 'no sandbox backend is installed',
      fix: 'set [cluster] backend in yard.toml to the id of an installed sandbox backend, or install the plugin that provides "k8s" (yard plugins install <package>); yard backends lists what is installed',
    })
  })

  it('says why a backend that a plugin failed to provide cannot be created', async () => {
    const registry = await loadRegistry(await loadTestConfig(['future']))
    const error = await registry.create('machine', 'future-machine', context).catch((error_: unknown) => error_)
    expect(error).to.be.instanceOf(InputError)
    expect((error as InputError).why).to.equal(
      'plugin yard-fixture-future provides it, but it is incompatible: implements backend contract 2, but this yard supports contract 1: install a release of yard-fixture-future made for contract 1, or a yard that supports contract 2',
    )
  })

  it('wraps a factory that throws in an OperationError (exit 1) and lets a YardError through', async () => {
    const refused = new RefusedError('machine is busy')
    const registry = registryOf([
      factory({
        id: 'crashing',
        create() {
          throw new TypeError('socket is undefined')
        },
      }),
      factory({
        id: 'refusing',
        async create() {
          throw refused
        },
      }),
    ])
    const crash = await registry.create('machine', 'crashing', context).catch((error: unknown) => error)
    expect(crash).to.be.instanceOf(OperationError)
    expect(crash).to.include({
      code: 1,
      message: 'could not create the machine backend "crashing"',
      why: 'its factory in plugin yard-test-plugin threw: socket is undefined',
    })
    expect(await registry.create('machine', 'refusing', context).catch((error: unknown) => error)).to.equal(refused)
  })

  it('rejects a created backend of another kind or id', async () => {
    const registry = await loadRegistry(await loadTestConfig(['good']))
    const error = await registry.create('stack', 'fixture-stack', context).catch((error_: unknown) => error_)
    expect(error).to.be.instanceOf(OperationError)
    expect(error).to.include({
      message: 'the stack backend "fixture-stack" from plugin yard-fixture-good is malformed',
      why: 'its create() returned kind "machine" and id "fixture-stack", expected an object with kind "stack" and id "fixture-stack"',
    })
  })
})
