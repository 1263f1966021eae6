/**
 * Full refs read from a repository's files, so that `yard worktree add` asks git one process
 * less (`for-each-ref`: 10–60 ms here, on the add's critical path). The layout is git's files ref
 * backend (gitrepository-layout(5) "refs" and "packed-refs", git-pack-refs(1)): a loose ref is
 * the file `<common dir>/<refname>` holding an object id or `ref: <target>`; `packed-refs` holds
 * `<oid> <refname>` lines (a `^<oid>` line peels the tag before it, a `#` line is its header);
 * a loose ref wins over its packed line. Loose files are read before `packed-refs`, the order in
 * which `git pack-refs` makes a ref safe to find (it writes `packed-refs`, then deletes the file).
 *
 * Anything else is left to git (the caller runs `for-each-ref`): the reftable backend, a ref
 * file or `packed-refs` line in no form above, a name git's rules refuse, symbolic refs deeper
 * than git follows. Objects are not read: a ref whose object is missing (a damaged repository),
 * which `for-each-ref` leaves out with a warning, is given as the file holds it, and the git
 * command that uses it fails with git's own message.
 */
import {constants, existsSync, readFileSync} from 'node:fs'
import path from 'node:path'

import {type RefEntry, validBranchName} from './git.js'

/** An object id of SHA-1 (40 hex) or SHA-256 (64 hex), as git writes them. */
const OID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/
/** git's SYMREF_MAXDEPTH (refs.h): a deeper chain is git's to report. */
const SYMREF_DEPTH = 5

/**
 * The refs of `refs` (full names, `refs/…`) as `git for-each-ref
 * --format=%(refname)%00%(objectname)%00%(symref)` of them answers: name → oid (a symbolic
 * ref's target's oid) and, for a symbolic ref, the ref its chain ends at (as `%(symref)` gives
 * it); absent refs are missing from the map. Undefined when the files cannot answer as git would
 * (the module's comment says when). Synchronous: a few small files.
 * @param commonDir the repository's common git dir (absolute), where shared refs live.
 * Never throws.
 */
export function readRefFiles(commonDir: string, refs: readonly string[]): Map<string, RefEntry> | undefined {
  try {
    if (existsSync(path.join(commonDir, 'reftable'))) return undefined
    if (!refs.every(plainRefName)) return undefined
    const loose = new Map<string, string | undefined>()
    const readLoose = (name: string) => {
      if (!loose.has(name)) loose.set(name, readLooseRef(commonDir, name))
      return loose.get(name)
    }

    // Loose first, packed after (see above); a symbolic ref's target is looked up the same way.
    let packed: Map<string, string> | undefined
    const packedRefs = () => (packed ??= readPackedRefs(commonDir))
    const found = new Map<string, RefEntry>()
    for (const name of refs) {
      let current = name
      for (let depth = 0; ; depth++) {
        if (depth > SYMREF_DEPTH) return undefined
        const content = readLoose(current)
        if (content === undefined) {
          const oid = packedRefs().get(current)
          if (oid !== undefined) found.set(name, current === name ? {oid} : {oid, symref: current})
          break
        }

        if (OID.test(content)) {
          found.set(name, current === name ? {oid: content} : {oid: content, symref: current})
          break
        }

        const target = /^ref: (refs\/\S+)$/.exec(content)?.[1]
        if (target === undefined || !plainRefName(target)) return undefined
        current = target
      }
    }

    return found
  } catch {
    return undefined
  }
}

/**
 * A loose ref's content without its line end, or undefined when there is no such file (or a
 * directory of refs stands there).
 * @throws for a file that exists but is in no form git writes, and for a symbolic link (git reads
 *   one as a symbolic ref, core.preferSymlinkRefs): the caller leaves both to git.
 */
function readLooseRef(commonDir: string, name: string): string | undefined {
  let text: string
  try {
    text = readFileSync(path.join(commonDir, name), {encoding: 'utf8', flag: constants.O_RDONLY | constants.O_NOFOLLOW})
  } catch (error) {
    const {code} = error as NodeJS.ErrnoException
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') return undefined
    throw error
  }

  const content = text.endsWith('\n') ? text.slice(0, -1) : text
  if (!OID.test(content) && !/^ref: refs\/\S+$/.test(content)) throw new Error(`unreadable ref ${name}`)
  return content
}

/** `packed-refs` as name → oid (peel lines skipped); empty without the file. @throws for a line in no known form. */
function readPackedRefs(commonDir: string): Map<string, string> {
  let text: string
  try {
    text = readFileSync(path.join(commonDir, 'packed-refs'), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map()
    throw error
  }

  const packed = new Map<string, string>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#') || (line.startsWith('^') && OID.test(line.slice(1)))) continue
    const space = line.indexOf(' ')
    const oid = line.slice(0, space)
    const name = line.slice(space + 1)
    if (space === -1 || !OID.test(oid) || !name.startsWith('refs/')) throw new Error('unreadable packed-refs')
    packed.set(name, oid)
  }

  return packed
}

/**
 * A full ref name git-check-ref-format(1) accepts (`validBranchName`'s rules), so its file path
 * stays under the git dir.
 */
const plainRefName = (name: string): boolean => name.startsWith('refs/') && validBranchName(name)
