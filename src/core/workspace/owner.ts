/**
 * The owner of a repository (DESIGN.md §3: identity.ts ownerHash, 12 hex of SHA-256 of the real
 * path of its root), kept in the repository's directory of yard's state
 * (kernel/repository-state.ts: never in `.git`, where a box could write another clone's owner)
 * with the root it was computed for. Every command needs the owner, and computing it loads
 * node:crypto (~5 ms of a `yard exec` start); a repository moved or copied elsewhere has another
 * root, and computes it anew. Keeping it is best effort: a file that cannot be read or written
 * means computing it each time.
 */
import path from 'node:path'

import {ownerHash} from '../identity/identity.js'
import {readKeptFile} from '../kernel/kept-file.js'
import {keepFile, repositoryStateDir} from '../kernel/repository-state.js'

const OWNER = /^[0-9a-f]{12}$/

/**
 * ownerHash(`root`), read from or kept in `<state dir>/repositories/<id>/owner.json` for the
 * repository whose git common directory is `commonDir`. Never throws but for a relative
 * YARD_STATE_DIR (InputError, exit 2, as every state read).
 */
export function repositoryOwner(root: string, env: NodeJS.ProcessEnv, commonDir: string): string {
  const file = path.join(repositoryStateDir(env, commonDir), 'owner.json')
  try {
    const kept = JSON.parse(readKeptFile(file, 4096) ?? 'null') as {root?: unknown; owner?: unknown}
    if (kept.root === root && typeof kept.owner === 'string' && OWNER.test(kept.owner)) return kept.owner
  } catch {
    // Absent or unreadable: computed below.
  }

  const owner = ownerHash(root)
  keepFile(file, JSON.stringify({root, owner}) + '\n')
  return owner
}
