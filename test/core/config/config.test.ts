import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {mkdirSync, symlinkSync} from 'node:fs'
import path from 'node:path'

import {loadConfig} from '../../../src/core/config/config.js'
import {InputError} from '../../../src/sdk/errors.js'
import {cleanupTemp, tempDir, writeFile} from '../../support/repo.js'

async function load(
  files: Record<string, string>,
  env: NodeJS.ProcessEnv = {},
  checkoutFiles?: Record<string, string>,
) {
  const main = path.join(tempDir('config'), 'app')
  for (const [name, content] of Object.entries(files)) writeFile(main, name, content)
  let checkout: {path: string; name: string} | undefined
  if (checkoutFiles) {
    checkout = {path: path.join(path.dirname(main), 'app-worktrees', 'feat'), name: 'feat'}
    for (const [name, content] of Object.entries(checkoutFiles)) writeFile(checkout.path, name, content)
  }

  const warnings: string[] = []
  const config = await loadConfig({
    mainPath: main,
    checkout,
    env: {YARD_STATE_DIR: '/state', ...env},
    warn: (message) => warnings.push(message),
  })
  return {config, main, warnings}
}

async function failure(files: Record<string, string>, env: NodeJS.ProcessEnv = {}): Promise<InputError> {
  try {
    await load(files, env)
  } catch (error) {
    expect(error).to.be.instanceOf(InputError)
    return error as InputError
  }

  throw new Error('expected an InputError')
}

describe('config (DESIGN.md §3.2)', () => {
  afterEach(cleanupTemp)

  it('gives defaults with their origins when there is no file', async () => {
    const {config, main} = await load({})
    expect(config.project.prefix).to.equal('app')
    expect(config.worktrees.root).to.equal(`${main}-worktrees`)
    expect(config.cache.root).to.equal('/state/caches')
    expect(config.machine.name).to.equal('yard-app')
    expect(config.origins['project.prefix']).to.equal('default')
    expect(config.ports).to.deep.equal({})
  })

  it('reads yard.toml, deep-merges yard.local.toml over it, then the environment', async () => {
    const {config} = await load(
      {
        'yard.toml':
          '[project]\nprefix = "shop"\n[ports]\nAPP_PORT = 3000\nDB_PORT = 5400\n[worktrees]\nroot = "../trees"\nbase = "origin/develop"\n',
        'yard.local.toml': '[ports]\nDB_PORT = 6400\n[worktrees]\nbase = "origin/main"\n[worktree-offsets]\nfeat = 4\n',
      },
      {YARD_WORKTREES_ROOT: '/elsewhere', YARD_NAMESPACE: 'team'},
    )
    expect(config.project.prefix).to.equal('shop')
    expect(config.ports).to.deep.equal({APP_PORT: 3000, DB_PORT: 6400})
    expect(config.origins['ports.APP_PORT']).to.equal('yard.toml')
    expect(config.origins['ports.DB_PORT']).to.equal('yard.local.toml')
    expect(config.worktrees.base).to.equal('origin/main')
    expect(config.worktrees.root).to.equal('/elsewhere')
    expect(config.origins['worktrees.root']).to.equal('env:YARD_WORKTREES_ROOT')
    expect(config.cluster.namespace).to.equal('team')
    expect(config.cluster['cache-root']).to.equal('/var/lib/yard/team/caches')
    expect(config.pins).to.deep.equal({feat: 4n})
  })

  it('takes per-checkout tables from the checkout table by table, project-wide ones from main only (with a warning)', async () => {
    const {config, warnings} = await load(
      {'yard.toml': '[project]\nprefix = "shop"\n[ports]\nAPP_PORT = 3000\n[stack]\nfiles = ["compose.yaml"]\n'},
      {},
      {'yard.toml': '[project]\nprefix = "other"\n[ports]\nWEB_PORT = 8000\n'},
    )
    expect(config.project.prefix).to.equal('shop')
    expect(config.ports).to.deep.equal({WEB_PORT: 8000})
    expect(config.origins['ports.WEB_PORT']).to.equal('feat/yard.toml')
    expect(config.stack.files).to.deep.equal(['compose.yaml'])
    expect(config.origins['stack.files']).to.equal('yard.toml')
    expect(warnings.join('\n')).to.match(/sets \[project\] differently/)
  })

  it('names file, line and column for a TOML syntax error', async () => {
    const error = await failure({'yard.toml': '[ports]\nAPP_PORT = 3000\nDB_PORT = = 1\n'})
    expect(error.code).to.equal(2)
    expect(error.message).to.match(/yard\.toml:3:\d+: TOML syntax error/)
  })

  const invalid: Array<[string, string, RegExp]> = [
    [
      'APP_PORT = "x"',
      '[ports]\nAPP_PORT = "x"\n',
      /ports\.APP_PORT: expected an integer from 1 to 65446, got the string "x"/,
    ],
    [
      'APP_PORT = 70000',
      '[ports]\nAPP_PORT = 70000\n',
      /ports\.APP_PORT: expected an integer from 1 to 65446, got the integer 70000/,
    ],
    ['APP_PORT = 3000.0', '[ports]\nAPP_PORT = 3000.0\n', /ports\.APP_PORT: .*got the float 3000/],
    [
      'overlapping ranges',
      '[ports]\nAPP_PORT = 3000\nAPI_PORT = 3001\n',
      /APP_PORT = 3000 and API_PORT = 3001 overlap/,
    ],
    ['bases exactly 89 apart', '[ports]\nAPP_PORT = 3000\nAPI_PORT = 3089\n', /overlap/],
    ['lower-case port key', '[ports]\napp_port = 3000\n', /ports\.app_port/],
    [
      'a reserved port key',
      '[ports]\nCOMPOSE_PROJECT_NAME = 3000\n',
      /ports\.COMPOSE_PROJECT_NAME: COMPOSE_PROJECT_NAME is a variable yard or your shell already uses/,
    ],
    ['PATH as a port key', '[ports]\nPATH = 4000\n', /ports\.PATH: PATH is a variable/],
    ['a YARD_ port key', '[ports]\nYARD_X = 4000\n', /ports\.YARD_X/],
    ['ports that is no table', 'ports = 5\n', /ports: expected a table of NAME = base port, got the integer 5/],
    ['unknown key prefx', '[project]\nprefx = "a"\n', /unknown key \[project\] prefx — did you mean "prefix"\?/],
    ['unknown table', '[prots]\nAPP_PORT = 1\n', /unknown table \[prots\] — did you mean "ports"\?/],
    ['pins in yard.toml', '[worktree-offsets]\nfeat = 3\n', /\[worktree-offsets\] does not belong in yard\.toml/],
    ['bad runtime', '[cluster]\nruntime = "docker"\n', /cluster\.runtime/],
    ['bad prefix', '[project]\nprefix = "Shop_App"\n', /invalid prefix "Shop_App" from yard\.toml \[project\] prefix/],
  ]
  for (const [label, toml, pattern] of invalid) {
    it(`refuses ${label} with exit 2, naming the file and key`, async () => {
      const error = await failure({'yard.toml': toml})
      expect(error.code).to.equal(2)
      expect(error.message).to.match(pattern)
      expect(error.message + error.why).to.contain('yard.toml')
    })
  }

  it("explains every invalid value in plain words with a why, never zod's own text", async () => {
    const prefix = await failure({'yard.toml': '[project]\nprefix = 5\n'})
    expect(prefix.message).to.contain('project.prefix: expected a string, got the integer 5')
    expect(prefix.why).to.contain('prefix')
    const files = await failure({'yard.toml': '[stack]\nfiles = "compose.yaml"\n'})
    expect(files.message).to.contain(
      'stack.files: expected an array of strings, e.g. files = ["compose.yaml"], got the string "compose.yaml"',
    )
    expect(files.message).not.to.contain('Invalid input')
    expect(files.why).to.contain('list of paths')
    const provider = await failure({'yard.toml': '[stack]\nprovider = "kompose"\n'})
    expect(provider.message)
      .to.contain('expected one of "auto", "podman compose"')
      .and.to.contain('got the string "kompose"')
    expect(provider.why).to.contain('compose tools')
    const fromEnv = await failure({}, {YARD_STACK_PROVIDER: 'kompose'})
    expect(fromEnv.why).to.contain('compose tools')
    expect(fromEnv.fix).to.equal('set YARD_STACK_PROVIDER to one of them, or unset it')
  })

  it('suggests a table only when the name is close, never the same name', async () => {
    const far = await failure({'yard.toml': 'x = 1\n'})
    expect(far.message).to.equal(`${far.message.split(':', 1)[0]}: unknown table [x]`)
    expect(far.why).to.equal('known tables: project, worktrees, machine, cache, cluster, ports, stack, box')
    expect(far.fix).not.to.contain('rename')
    const pins = await failure({'yard.toml': '[worktree-offsets]\nfeat = 3\n'})
    expect(pins.message).to.match(/yard\.toml: \[worktree-offsets\] does not belong in yard\.toml$/)
    expect(pins.message + pins.fix).not.to.contain('did you mean')
    expect(pins.fix).to.equal('move the [worktree-offsets] table to yard.local.toml in the main checkout')
  })

  it('refuses a yard.toml that is a directory, a dangling symlink or a FIFO, without reading it', async () => {
    const main = path.join(tempDir('config'), 'app')
    mkdirSync(path.join(main, 'yard.toml'), {recursive: true})
    const directory = await (async () => {
      try {
        await loadConfig({mainPath: main, env: {}})
      } catch (error) {
        return error as InputError
      }

      throw new Error('expected an InputError')
    })()
    expect(directory.code).to.equal(2)
    expect(directory.message).to.equal(`${path.join(main, 'yard.toml')} is a directory, not a file`)
    expect(directory.render()).not.to.contain('permissions')

    const linked = path.join(tempDir('config'), 'linked')
    mkdirSync(linked)
    symlinkSync(path.join(linked, 'gone.toml'), path.join(linked, 'yard.toml'))
    expect(await loadConfig({mainPath: linked, env: {}}).catch((error: unknown) => error))
      .to.be.instanceOf(InputError)
      .with.property(
        'message',
        `${path.join(linked, 'yard.toml')} is a symlink to ${path.join(linked, 'gone.toml')}, which does not exist`,
      )

    const piped = path.join(tempDir('config'), 'piped')
    mkdirSync(piped)
    execFileSync('mkfifo', [path.join(piped, 'yard.toml')])
    expect(await loadConfig({mainPath: piped, env: {}}).catch((error: unknown) => error))
      .to.be.instanceOf(InputError)
      .with.property('message')
      .that.contains('is a named pipe (FIFO), not a file')
  })

  it('accepts bases 90 apart', async () => {
    expect((await load({'yard.toml': '[ports]\nAPP_PORT = 3000\nAPI_PORT = 3090\n'})).config.ports).to.deep.equal({
      APP_PORT: 3000,
      API_PORT: 3090,
    })
  })

  it('refuses an invalid YARD_PREFIX or YARD_STACK_PROVIDER naming the variable', async () => {
    expect((await failure({}, {YARD_PREFIX: 'Nope!'})).message).to.contain('env YARD_PREFIX')
    expect((await failure({}, {YARD_STACK_PROVIDER: 'kompose'})).message).to.contain('env:YARD_STACK_PROVIDER')
    expect((await failure({}, {YARD_NAMESPACE: 'Bad NS!'})).message).to.contain(
      'invalid Kubernetes namespace "Bad NS!" from env YARD_NAMESPACE',
    )
    expect((await failure({'yard.toml': '[cluster]\nnamespace = "a_b"\n'})).message).to.contain(
      'yard.toml [cluster] namespace',
    )
    expect((await failure({}, {YARD_STATE_DIR: 'relative/state'})).message).to.contain(
      'YARD_STATE_DIR must be an absolute path',
    )
  })

  it('refuses option-like values at load, naming the file and key: an image that is no reference, a leading "-" anywhere', async () => {
    for (const [toml, key] of [
      ['[box]\nimage = "--privileged"\n', 'box.image'],
      ['[box]\nimage = "--volume=/:/host"\n', 'box.image'],
      ['[box]\nimage = "Upper/Case"\n', 'box.image'],
      ['[cluster]\nimage = "-x"\n', 'cluster.image'],
      ['[machine]\nname = "--rm"\n', 'machine.name'],
      ['[machine]\nname = "a b"\n', 'machine.name'],
      ['[cluster]\ncontext = "--kubeconfig=/tmp/evil"\n', 'cluster.context'],
      ['[worktrees]\nbase = "--output=/tmp/x"\n', 'worktrees.base'],
      ['[stack]\nfiles = ["-f.yaml"]\n', 'stack.files.0'],
    ] as const) {
      const error = await failure({'yard.toml': toml})
      expect(error.message, toml).to.match(
        new RegExp(String.raw`yard\.toml: invalid value at ${key.replaceAll('.', String.raw`\.`)}: `),
      )
      expect(error.message).to.contain(path.sep + 'yard.toml')
    }

    expect((await failure({}, {YARD_KUBE_CONTEXT: '--kubeconfig=/tmp/evil'})).message).to.equal(
      'invalid YARD_KUBE_CONTEXT "--kubeconfig=/tmp/evil": it starts with "-"',
    )
    const {config} = await load({
      'yard.toml':
        '[box]\nimage = "registry.example.com:5000/team/app-dev:1.2_3"\n[cluster]\nimage = "localhost/yard-default@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"\n[machine]\nname = "yard-app_2.x"\n',
    })
    expect(config.box.image).to.equal('registry.example.com:5000/team/app-dev:1.2_3')
    expect(config.machine.name).to.equal('yard-app_2.x')
  })
})
