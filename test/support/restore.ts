/**
 * Runs a restore command exactly as `yard worktree remove` printed it: `&&`-joined steps, each
 * `yard …` step through the in-process CLI, every other step through `sh -c`.
 */
import {execFileSync} from 'node:child_process'

import {yard} from './yard.js'

/** The text after `label` on the printed line that starts with it (trimmed), or undefined. */
export function printedAfter(output: string, label: string): string | undefined {
  const line = output.split('\n').find((item) => item.trimStart().startsWith(label))
  return line?.trimStart().slice(label.length).trim()
}

/**
 * Runs `command` step by step in `cwd`; throws on the first step that fails, naming it.
 * `yard` steps are split into words by `sh` (quotes and all) and run in-process.
 */
export async function runPrinted(
  command: string,
  options: {cwd: string; env: Record<string, string | undefined>},
): Promise<void> {
  for (const step of command.split(' && ')) {
    if (step.startsWith('yard ')) {
      // The shell itself splits the words, quotes included, as a paste into it would.
      const words = execFileSync('sh', ['-c', String.raw`printf '%s\0' ${step.slice('yard '.length)}`], {
        encoding: 'utf8',
      })
        .split('\0')
        .slice(0, -1)
      const run = await yard(words, options)
      if (run.exitCode !== 0) throw new Error(`\`${step}\` exited ${run.exitCode}: ${run.stderr}`)
      continue
    }

    const env = Object.fromEntries(
      Object.entries({...process.env, ...options.env}).filter(
        (entry): entry is [string, string] => entry[1] !== undefined,
      ),
    )
    execFileSync('sh', ['-c', step], {cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe']})
  }
}
