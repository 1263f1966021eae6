import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {existsSync, readFileSync} from 'node:fs'
import path from 'node:path'

import {projectRoot} from '../support/oclif-config.js'
import {cleanupTemp, makeRepo} from '../support/repo.js'
import {yard} from '../support/yard.js'

const FOUNDATION = ['backends', 'config', 'doctor', 'env', 'init', 'ports', 'autocomplete', 'help']

describe('the yard CLI', () => {
  afterEach(cleanupTemp)

  it('ships bin/run.js that lists the commands and prints its version (built by npm ci / npm run build)', function () {
    this.timeout(120_000)
    if (!existsSync(path.join(projectRoot, 'dist', 'commands', 'ports.js'))) execFileSync('npm', ['run', '--silent', 'build'], {cwd: projectRoot, stdio: 'ignore'})
    const env = {...process.env, NODE_ENV: 'production'}
    const version = execFileSync(process.execPath, [path.join(projectRoot, 'bin', 'run.js'), '--version'], {encoding: 'utf8', env})
    const pkg = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as {version: string}
    expect(version).to.match(new RegExp(`^@yard-dev/cli/${pkg.version.replaceAll('.', '\\.')} `))
    const help = execFileSync(process.execPath, [path.join(projectRoot, 'bin', 'run.js'), '--help'], {encoding: 'utf8', env})
    const listed = help.split('COMMANDS')[1] ?? ''
    for (const command of FOUNDATION) expect(listed, command).to.match(new RegExp(`^  ${command} `, 'm'))
    expect(listed).not.to.match(/^ {2}base\b/m)
  })

  it('answers an unknown flag with exit 2 and, with --json, a small error object', async () => {
    const repo = makeRepo()
    const text = await yard(['ports', '--bogus'], {cwd: repo})
    expect(text.exitCode).to.equal(2)
    expect(text.stderr).to.contain('Nonexistent flag: --bogus')
    const json = await yard(['ports', '--all', '--worktree', 'feat', '--json'], {cwd: repo})
    expect(json.exitCode).to.equal(2)
    expect(json.json).to.deep.equal({error: {code: 2, message: '--worktree=feat cannot also be provided when using --all', fix: 'run `yard ports --help` for its flags and arguments'}})
    const format = await yard(['env', '--format', 'xml', '--json'], {cwd: repo})
    expect(format.exitCode).to.equal(2)
    expect(format.json).to.have.nested.property('error.message').that.contains('Expected --format=xml to be one of: sh, fish, json')
  })
})
