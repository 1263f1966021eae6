/**
 * The owner of a repository (DESIGN.md §3: identity.ts ownerHash, 12 hex of SHA-256 of the real
 * path of its root), kept in `<git common dir>/yard/owner` beside the root it was computed for.
 * Every command needs the owner, and computing it loads node:crypto (~5 ms of a `yard exec`
 * start); a repository moved or copied elsewhere has another root, and computes it anew. Keeping
 * it is best effort: a file that cannot be read or written means computing it each time.
 */
import {mkdirSync, readFileSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {ownerHash} from '../identity/identity.js'

const OWNER = /^[0-9a-f]{12}$/

/** ownerHash(`root`), read from or kept in `<commonDir>/yard/owner`. Never throws. */
export function repositoryOwner(root: string, commonDir: string): string {
  const file = path.join(commonDir, 'yard', 'owner')
  try {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as {root?: unknown; owner?: unknown}
    if (kept.root === root && typeof kept.owner === 'string' && OWNER.test(kept.owner)) return kept.owner
  } catch {
    // Absent or unreadable: computed below.
  }

  const owner = ownerHash(root)
  const temporary = `${file}.${process.pid}.tmp`
  try {
    mkdirSync(path.dirname(file), {recursive: true})
    writeFileSync(temporary, JSON.stringify({root, owner}) + '\n')
    renameSync(temporary, file)
  } catch {
    try {
      rmSync(temporary, {force: true})
    } catch {
      // Its directory could not be made: there is nothing to remove.
    }
  }

  return owner
}
