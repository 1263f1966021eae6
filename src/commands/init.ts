import {Flags} from '@oclif/core'
import path from 'node:path'

import {initProject, type InitResult} from '../core/config/index.js'
import {BaseCommand} from './base.js'

export default class Init extends BaseCommand {
  static summary = "Write a commented yard.toml in the main checkout and gitignore yard's personal files"

  static description = `Run anywhere in the repository (a worktree too): yard.toml goes to the main checkout, found from git's common dir. yard.local.toml and .yard/ are added to its .gitignore when missing.
An existing yard.toml is kept unless --force is given (exit 3).`

  static examples = [
    '<%= config.bin %> init',
    '<%= config.bin %> init --prefix shop',
    '<%= config.bin %> init --force --json',
  ]

  static flags = {
    prefix: Flags.string({
      description: "the project's short name ([project] prefix): a-z, 0-9 and inner -, at most 22 characters",
      helpValue: 'PREFIX',
    }),
    force: Flags.boolean({description: 'replace an existing yard.toml', default: false}),
  }

  async run(): Promise<Pick<InitResult, 'path'> & {gitignore: {added: string[]}}> {
    const {flags} = await this.parse(Init)
    const result = await initProject(this.context, {prefix: flags.prefix, force: flags.force})
    this.print(`wrote ${result.path}`)
    this.print(
      result.gitignore.added.length > 0
        ? `added ${result.gitignore.added.join(', ')} to ${result.gitignore.path}`
        : `${result.gitignore.path} already ignores yard.local.toml and .yard/`,
    )
    this.print(
      `commit ${path.basename(result.path)} and ${path.basename(result.gitignore.path)}: every worktree and teammate reads the same yard.toml (yard.local.toml stays yours)`,
    )
    return {path: result.path, gitignore: {added: result.gitignore.added}}
  }
}
