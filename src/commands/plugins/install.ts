import {Args, Flags} from '@oclif/core'
import {commands} from '@oclif/plugin-plugins'

import {classifyPluginSource, consentToInstall} from '../../core/registry/index.js'
import {YardError} from '../../sdk/errors.js'
import {confirm} from '../../tui/confirm.js'

const BaseInstall: (typeof commands)['plugins:install'] = commands['plugins:install']

/**
 * `yard plugins install NAME|PATH|GIT-URL` (DESIGN.md §7): @oclif/plugin-plugins' install, plus
 * local paths and the question before installing code from anything but a plain registry name
 * (Appendix B).
 */
export default class PluginsInstall extends BaseInstall {
  static summary = 'Install a plugin (a backend, or commands) from npm, a local path or a git url'
  static description = `A plugin is code that runs with your permissions every time yard runs. yard says so, and asks before installing anything but a plain registry name (name, name@version, name@range, name@tag): a local path, NAME@file:PATH, a git url, a tarball url or an npm: alias; --yes answers for you. Without a terminal to ask on and without --yes, yard refuses (exit 3). \`yard plugins link PATH\` (your own checkout, for development) does not ask.

A path is installed as a link to its directory, so build it first (docs/plugins.md).`
  static examples = [
    {
      command: '<%= config.bin %> plugins install yard-backend-lima',
      description: 'Install a plugin from the npm registry.',
    },
    {
      command: '<%= config.bin %> plugins install ./examples/procfile-stack --yes',
      description: 'Install a built plugin from a local directory, without the question.',
    },
    {
      command: '<%= config.bin %> plugins install https://github.com/acme/yard-backend-nomad.git',
      description: 'Install a plugin from a git url (asks first).',
    },
  ]

  static strict = false
  // Never read from standard input (oclif would take piped text for the plugin to install).
  static args = {plugin: Args.string({description: 'Plugin to install.', required: true, ignoreStdin: true})}
  static flags = {
    ...BaseInstall.flags,
    yes: Flags.boolean({
      char: 'y',
      description: 'install from a path, git url, tarball url or npm: alias without asking',
    }),
  }

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(PluginsInstall)
    const sources = (argv as string[]).map((given) => classifyPluginSource(given, process.cwd()))
    await consentToInstall(sources, {
      yes: flags.yes,
      interactive: Boolean(process.stdin.isTTY && process.stderr.isTTY),
      ask: async (question) => confirm(question, {input: process.stdin, output: process.stderr}),
      note: (text) => process.stderr.write(text + '\n'),
    })
    // plugin-plugins reads `owner/repo` paths as GitHub slugs: it gets `file:<absolute path>`.
    const forwarded = Object.entries({
      force: flags.force,
      silent: flags.silent,
      verbose: flags.verbose,
      jit: flags.jit,
      json: flags.json,
    })
      .filter(([, set]) => set === true)
      .map(([name]) => `--${name}`)
    this.argv = [...forwarded, ...sources.map((source) => source.spec)]
    await super.run()
  }

  protected async catch(error: Error & {exitCode?: number}): Promise<unknown> {
    if (!(error instanceof YardError)) return super.catch(error)
    process.exitCode = error.code
    if (this.jsonEnabled())
      this.logJson({error: {code: error.code, message: error.message, why: error.why, fix: error.fix}})
    else this.logToStderr(error.render())
    return this.exit(error.code)
  }
}
