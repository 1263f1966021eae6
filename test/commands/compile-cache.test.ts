/**
 * bin/run.js turns on Node's module compile cache in yard's cache directory (DESIGN.md §9):
 * XDG_CACHE_HOME/yard/node-compile-cache, nothing in the package. A cache directory that cannot
 * be made (under a regular file), is read-only or is full never fails a command nor prints.
 * The read-only and full cases are tmpfs mounts (as root, mode bits do not stop writes).
 */
import {expect} from 'chai'
import {execFileSync, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {projectRoot} from '../support/oclif-config.js'
import {cleanupTemp, makeRepo, tempDir} from '../support/repo.js'

const runJs = path.join(projectRoot, 'bin', 'run.js')
const {version} = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8'))

function yard(args: string[], cwd: string, cacheHome: string): {status: number | null; stdout: string; stderr: string} {
  const env: NodeJS.ProcessEnv = {...process.env, XDG_CACHE_HOME: cacheHome, YARD_STATE_DIR: tempDir('yard-state')}
  for (const key of [
    'NODE_ENV',
    'NODE_COMPILE_CACHE',
    'NODE_DISABLE_COMPILE_CACHE',
    'YARD_WORKTREE',
    'WT_OFFSET',
    'YARD_PREFIX',
  ])
    delete env[key]
  const child = spawnSync(process.execPath, [runJs, ...args], {cwd, env, encoding: 'utf8', timeout: 60_000})
  return {status: child.status, stdout: child.stdout, stderr: child.stderr}
}

const mounted: string[] = []
/**
 * A tmpfs with these mount options at a new directory; throws when this host cannot mount (yard's
 * tests run as root).
 */
function tmpfs(options: string): string {
  const dir = tempDir('yard-cache-mount')
  execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir])
  mounted.push(dir)
  return dir
}

describe('the compile cache of bin/run.js (DESIGN.md §9)', function () {
  this.timeout(120_000)
  let repo: string

  before(() => {
    if (!existsSync(path.join(projectRoot, 'dist', 'commands', 'ports.js')))
      execFileSync('npm', ['run', '--silent', 'build:cli'], {cwd: projectRoot, stdio: 'ignore'})
    repo = makeRepo({'yard.toml': '[project]\nprefix = "yardtest-cc"\n\n[ports]\nAPP_PORT = 3000\n'})
  })

  after(() => {
    for (const dir of mounted.splice(0)) spawnSync('umount', [dir])
    cleanupTemp()
  })

  const expectClean = (run: {status: number | null; stdout: string; stderr: string}) => {
    expect(run.status, run.stderr).to.equal(0)
    expect(run.stdout).to.include(`@yard-dev/cli/${version}`)
    expect(run.stderr).to.equal('')
  }

  it('writes the cache under XDG_CACHE_HOME/yard, one directory per Node version, and nothing into the package', () => {
    const cacheHome = tempDir('yard-cache-home')
    const before = readdirSync(projectRoot).sort()
    expectClean(yard(['--version'], repo, cacheHome))
    const cache = path.join(cacheHome, 'yard', 'node-compile-cache')
    const versions = readdirSync(cache)
    expect(versions).to.have.length(1)
    expect(versions[0]).to.match(new RegExp(`^${process.version.replaceAll('.', String.raw`\.`)}-`))
    expect(readdirSync(path.join(cache, versions[0])).length, 'cached modules').to.be.greaterThan(10)
    expect(readdirSync(projectRoot).sort()).to.deep.equal(before)
    // A warm start reads it and answers the same.
    expectClean(yard(['--version'], repo, cacheHome))
  })

  it('without XDG_CACHE_HOME, uses the directory env-paths gives (HOME/.cache/yard on Linux)', () => {
    const home = tempDir('yard-home')
    const env: NodeJS.ProcessEnv = {...process.env, HOME: home, YARD_STATE_DIR: tempDir('yard-state')}
    for (const key of ['XDG_CACHE_HOME', 'NODE_ENV', 'NODE_COMPILE_CACHE', 'NODE_DISABLE_COMPILE_CACHE'])
      delete env[key]
    const run = spawnSync(process.execPath, [runJs, '--version'], {cwd: repo, env, encoding: 'utf8', timeout: 60_000})
    expect(run.status, run.stderr).to.equal(0)
    const expected = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import envPaths from 'env-paths'; process.stdout.write(envPaths('yard', {suffix: ''}).cache)",
      ],
      {cwd: projectRoot, env, encoding: 'utf8'},
    )
    expect(expected).to.equal(path.join(home, '.cache', 'yard'))
    expect(readdirSync(path.join(expected, 'node-compile-cache'))).to.have.length(1)
  })

  it('runs as without a cache when the directory cannot be made (under a regular file)', () => {
    const file = path.join(tempDir('yard-cache-file'), 'not-a-dir')
    writeFileSync(file, '')
    expectClean(yard(['--version'], repo, file))
    const ports = yard(['ports', '--json'], repo, file)
    expect(ports.status, ports.stderr).to.equal(0)
    expect(JSON.parse(ports.stdout).ports).to.deep.equal({APP_PORT: 3000})
  })

  it('runs as without a cache on a read-only cache directory', () => {
    const readOnly = tmpfs('ro,size=1m')
    expectClean(yard(['--version'], repo, readOnly))
    expect(readdirSync(readOnly)).to.deep.equal([])
  })

  it('runs as without a cache on a full cache directory, cold and after a partial write', () => {
    const full = tmpfs('size=64k')
    mkdirSync(path.join(full, 'yard'))
    // Fill what is left: the cache gets at most a few entries before ENOSPC.
    spawnSync('dd', ['if=/dev/zero', `of=${path.join(full, 'filler')}`, 'bs=4k'])
    expectClean(yard(['--version'], repo, full))
    expectClean(yard(['--version'], repo, full))
    const ports = yard(['ports', '--json'], repo, full)
    expect(ports.status, ports.stderr).to.equal(0)
    expect(ports.stderr).to.equal('')
  })
})
