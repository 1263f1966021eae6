import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {existsSync, readFileSync} from 'node:fs'
import path from 'node:path'

import {projectRoot} from '../support/oclif-config.js'
import {cleanupTemp, makeRepo} from '../support/repo.js'
import {testConfig, yard} from '../support/yard.js'

const FOUNDATION = ['backends', 'config', 'doctor', 'env', 'init', 'ports', 'autocomplete', 'help']

describe('the yard CLI', () => {
  afterEach(cleanupTemp)

  it('ships bin/run.js that lists the commands and prints its version (built by npm ci / npm run build)', function () {
    this.timeout(120_000)
    if (!existsSync(path.join(projectRoot, 'dist', 'commands', 'ports.js')))
      execFileSync('npm', ['run', '--silent', 'build'], {cwd: projectRoot, stdio: 'ignore'})
    const env = {...process.env, NODE_ENV: 'production'}
    const version = execFileSync(process.execPath, [path.join(projectRoot, 'bin', 'run.js'), '--version'], {
      encoding: 'utf8',
      env,
    })
    const pkg = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as {version: string}
    expect(version).to.match(new RegExp(`^@yard-dev/cli/${pkg.version.replaceAll('.', String.raw`\.`)} `))
    const help = execFileSync(process.execPath, [path.join(projectRoot, 'bin', 'run.js'), '--help'], {
      encoding: 'utf8',
      env,
    })
    const listed = help.split('COMMANDS', 2)[1] ?? ''
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
    expect(json.json).to.deep.equal({
      error: {
        code: 2,
        message: '--worktree=feat cannot also be provided when using --all',
        fix: 'run `yard ports --help` for its flags and arguments',
      },
    })
    const format = await yard(['env', '--format', 'xml', '--json'], {cwd: repo})
    expect(format.exitCode).to.equal(2)
    expect(format.json)
      .to.have.nested.property('error.message')
      .that.contains('Expected --format=xml to be one of: sh, fish, json')
  })

  it('refuses a second word after a targeting command as an unexpected argument (exit 2)', async () => {
    const repo = makeRepo()
    for (const argv of [
      ['up', 'feat', 'extra'],
      ['nuke', 'feat', 'extra', '--dry-run'],
      ['nuke', '--dry-run', 'feat', 'extra'],
    ]) {
      const run = await yard(argv, {cwd: repo})
      expect(run.exitCode, argv.join(' ')).to.equal(2)
      expect(run.stderr, argv.join(' ')).to.contain('Unexpected argument: extra')
      expect(run.stderr, argv.join(' ')).not.to.contain('did you mean --worktree')
      expect(run.stderr, argv.join(' ')).not.to.contain('is not a yard command')
    }

    const json = await yard(['up', 'feat', 'extra', '--json'], {cwd: repo})
    expect(json.exitCode).to.equal(2)
    expect(json.json).to.deep.equal({
      error: {code: 2, message: 'Unexpected argument: extra', fix: 'run `yard up --help` for its flags and arguments'},
    })
    const unknown = await yard(['worktree', 'nosuch'], {cwd: repo})
    expect(unknown.exitCode).to.equal(127)
    expect(unknown.stderr).to.contain('worktree nosuch is not a yard command')
  })

  it('takes -h for help and -v for the version', async () => {
    const help = await yard(['-h'])
    expect(help.exitCode).to.equal(0)
    expect(help.stdout).to.match(/^COMMANDS$/m)
    expect(help.stderr).not.to.contain('not a yard command')
    const commandHelp = await yard(['up', '-h'])
    expect(commandHelp.exitCode).to.equal(0)
    expect(commandHelp.stdout).to.contain('$ yard up')
    const version = await yard(['-v'])
    expect(version.exitCode).to.equal(0)
    expect(version.stdout).to.match(/^@yard-dev\/cli\/\d/)
  })

  it('describes every topic in its own words, never by one of its commands', async () => {
    const config = await testConfig()
    const topics = new Set(
      config.commands
        .filter((command) => command.pluginName === config.pjson.name && command.id.includes(':'))
        .map((command) => command.id.split(':', 1)[0]),
    )
    expect([...topics]).to.include.members(['box', 'worktree'])
    for (const name of topics) {
      const described = config.pjson.oclif.topics?.[name]?.description
      expect(described, name).to.be.a('string').and.not.to.equal('')
    }

    const box = await yard(['help', 'box'])
    expect(box.stdout.split('\n', 1)[0]).to.equal(config.pjson.oclif.topics?.box?.description)
    expect(box.stdout.split('\n', 1)[0]).not.to.equal("Remove the targeted checkout's dev box")
  })

  it('gives errors as JSON with env --format json, as with --json', async () => {
    const repo = makeRepo()
    for (const argv of [
      ['env', '--format', 'json', '-w', 'Bad/x'],
      ['env', '--format=json', '-w', 'Bad/x'],
    ]) {
      const run = await yard(argv, {cwd: repo})
      expect(run.exitCode).to.equal(2)
      expect(run.json, argv.join(' ')).to.have.nested.property('error.code', 2)
      expect(run.json).to.have.nested.property('error.message').that.contains('invalid worktree name')
    }

    const ok = await yard(['env', '--format', 'json'], {cwd: repo})
    expect(ok.json).to.have.property('MAIN_REPO')
  })
})
