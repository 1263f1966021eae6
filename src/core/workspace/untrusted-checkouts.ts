/**
 * Where this host's untrusted worktrees are (docs/worktrees.md, "Untrusted worktrees"), kept
 * outside every checkout: `<state dir>/untrusted-checkouts.json`. Run from inside an untrusted
 * worktree, yard must not ask git which repository the directory belongs to: its box writes the
 * checkout, and a `.git` directory it plants there (at the top or in any subdirectory) would make
 * that directory pose as a main checkout, whose config git obeys and whose compose file yard would
 * run unchecked. So findMainCheckout looks here first and opens the repository recorded for the
 * worktree instead. `worktree add --untrusted` and `worktree trust` write the record;
 * `worktree remove` and `worktree trust --trusted` take it away.
 */
import {promises as fs, readFileSync} from 'node:fs'
import path from 'node:path'

import {atomicWrite} from '../kernel/atomic-write.js'
import {stateDir} from '../kernel/state.js'
import {adminDirOf} from './git-link.js'

/** One untrusted worktree: real paths of its checkout, its repository's common dir and main checkout. */
export interface UntrustedCheckout {
  checkout: string
  commonDir: string
  mainPath: string
}

const registryFile = (env: NodeJS.ProcessEnv) => path.join(stateDir(env), 'untrusted-checkouts.json')

function readRegistry(env: NodeJS.ProcessEnv): UntrustedCheckout[] {
  try {
    const parsed = JSON.parse(readFileSync(registryFile(env), 'utf8')) as {checkouts?: unknown}
    return Array.isArray(parsed.checkouts)
      ? parsed.checkouts.filter(
          (entry): entry is UntrustedCheckout =>
            typeof entry?.checkout === 'string' &&
            typeof entry?.commonDir === 'string' &&
            typeof entry?.mainPath === 'string',
        )
      : []
  } catch {
    return []
  }
}

const inside = (child: string, parent: string) => {
  const relative = path.relative(parent, child)
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))
}

/**
 * The recorded untrusted worktree whose checkout holds `directory` (a real path), when the
 * repository still has it (its administrative directory names the checkout: adminDirOf); else
 * undefined. Reads one small file; never throws.
 */
export function untrustedCheckoutAt(env: NodeJS.ProcessEnv, directory: string): UntrustedCheckout | undefined {
  return readRegistry(env).find(
    (entry) => inside(directory, entry.checkout) && adminDirOf(entry.commonDir, entry.checkout) !== undefined,
  )
}

/**
 * Records (`untrusted` true) or forgets the untrusted worktree `entry.checkout`, atomically.
 * @throws the fs error when the state directory cannot be written.
 */
export async function recordUntrustedCheckout(
  env: NodeJS.ProcessEnv,
  entry: UntrustedCheckout,
  untrusted: boolean,
): Promise<void> {
  const others = readRegistry(env).filter((known) => known.checkout !== entry.checkout)
  const checkouts = untrusted ? [...others, entry] : others
  await fs.mkdir(stateDir(env), {recursive: true})
  await atomicWrite(registryFile(env), `${JSON.stringify({checkouts}, null, 2)}\n`)
}
