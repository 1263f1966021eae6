/**
 * `yard up` in a worktree (DESIGN.md §4.2): main's gitignored env files (`.env`, `.env.*` at the
 * checkout's top) that the worktree lacks. git does not put ignored files in a new worktree, so
 * its stack would run without their values; `up` warns, naming each file.
 */
import {existsSync, promises as fs} from 'node:fs'
import path from 'node:path'

import type {ProcessRunner} from '../../sdk/process.js'
import type {Target} from '../../sdk/target.js'

const ENV_FILE = /^\.env(\..+)?$/

/** Names (relative to the checkout) of main's gitignored env files missing from the worktree; none for main. */
export async function missingEnvFiles(runner: ProcessRunner, target: Target): Promise<string[]> {
  if (target.isMain || !existsSync(target.checkoutPath)) return []
  const names = (await fs.readdir(target.mainPath, {withFileTypes: true}).catch(() => []))
    .filter((entry) => entry.isFile() && ENV_FILE.test(entry.name))
    .map((entry) => entry.name)
  if (names.length === 0) return []
  // `git check-ignore` prints the ignored ones (exit 1 when none is).
  const ignored = await runner.run('git', ['-C', target.mainPath, 'check-ignore', '--', ...names], {allowFailure: true})
  const list = ignored.stdout
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
  return list.filter((name) => !existsSync(path.join(target.checkoutPath, name)))
}

/** The warning for one missing env file, with the copy command. */
export function describeMissingEnvFile(name: string, target: Target): string {
  return `warning: main has ${name} (ignored by git) and worktree ${target.name} has none, so its stack runs without those values; copy it: cp ${path.join(target.mainPath, name)} ${path.join(target.checkoutPath, name)}`
}
