/**
 * What yard keeps per repository between runs that is only its own to know (the config cache,
 * the owner), in `<state dir>/repositories/<id>/`: never in the repository's `.git`, which code in
 * a box may be able to write (a main checkout's box with `[box] mounts = "worktree"` writes
 * `.git` but for its config, hooks and worktrees), and whose contents yard would then believe.
 * The state directory is the user's alone (made 0700, state.ts ensureStateDir).
 */
import {closeSync, mkdirSync, openSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {stateDir} from './state.js'

/**
 * `<state dir>/repositories/<id>`: `id` is the 64-bit FNV-1a hash of the repository's git common
 * directory (its real path), in hex. Two repositories that share an id share the directory;
 * what is kept there is keyed by absolute paths, so they only keep less.
 * @throws InputError (exit 2) for a relative YARD_STATE_DIR (state.ts stateDir).
 */
export function repositoryStateDir(env: NodeJS.ProcessEnv, commonDir: string): string {
  return path.join(stateDir(env), 'repositories', fnv1a64(commonDir))
}

/**
 * Writes `text` to `file` through a temporary file created exclusively (O_EXCL: an existing file
 * or a link planted in its place is never written through) and a rename, making the directory
 * (0700) first. Best effort: whatever fails leaves `file` as it was. Never throws.
 */
export function keepFile(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.${Math.random().toString(16).slice(2)}.tmp`
  let created = false
  try {
    mkdirSync(path.dirname(file), {recursive: true, mode: 0o700})
    // Created, then written: a write that fails (ENOSPC) still has the file removed below.
    const descriptor = openSync(temporary, 'wx', 0o600)
    created = true
    try {
      writeFileSync(descriptor, text)
    } finally {
      closeSync(descriptor)
    }

    renameSync(temporary, file)
  } catch {
    try {
      if (created) rmSync(temporary, {force: true})
    } catch {
      // Left for the next run's rename to pass by; nothing reads it.
    }
  }
}

/** FNV-1a, 64 bits, of the UTF-8 bytes of `text`, as 16 hex digits (no crypto module needed). */
function fnv1a64(text: string): string {
  let hash = 0xcb_f2_9c_e4_84_22_23_25n
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= BigInt(byte)
    hash = (hash * 0x1_00_00_00_01_b3n) & 0xff_ff_ff_ff_ff_ff_ff_ffn
  }

  return hash.toString(16).padStart(16, '0')
}
