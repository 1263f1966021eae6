import {Args} from '@oclif/core'

import {BaseCommand} from './base.js'

/** `yard completion bash|zsh`: a completion script that asks yard itself for every TAB. */
export default class Completion extends BaseCommand {
  static summary =
    'Print a shell completion script that completes worktrees, sandboxes, SANDBOX/BRANCH, services and cache urls'

  static description =
    "Beyond commands and flags, the script asks `yard complete` for the values only yard knows: worktree names (and main), sandbox names and SANDBOX/BRANCH (exec, shell), the services of a checkout (logs) and the cached urls (cache fetch, evict, maintain). Load it from your shell's start-up file."

  static examples = [
    {command: 'echo \'eval "$(<%= config.bin %> completion bash)"\' >> ~/.bashrc', description: 'bash'},
    {command: 'echo \'eval "$(<%= config.bin %> completion zsh)"\' >> ~/.zshrc', description: 'zsh (after compinit)'},
  ]

  static enableJsonFlag = false
  static args = {shell: Args.string({description: 'the shell', options: ['bash', 'zsh'], required: true})}

  async run(): Promise<void> {
    const {args} = await this.parse(Completion)
    this.printData(args.shell === 'bash' ? bashScript(this.config.bin) : zshScript(this.config.bin))
  }
}

/** bash: one candidate per line from `yard complete`, words split on newlines only. */
function bashScript(bin: string): string {
  return `_${bin}_complete() {
  local IFS=$'\\n'
  COMPREPLY=($(${bin} complete -- "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _${bin}_complete ${bin}`
}

/** zsh: the same through compadd (needs compinit, as every completion does). */
function zshScript(bin: string): string {
  return `_${bin}_complete() {
  local -a candidates
  candidates=("\${(@f)$(${bin} complete -- "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  compadd -- "\${candidates[@]}"
}
compdef _${bin}_complete ${bin}`
}
