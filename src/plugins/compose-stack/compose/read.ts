/**
 * Reading the files a compose project names (compose files, `include`/`extends` files, `.env`
 * and `env_file` files): only regular files, and only up to a size no real one reaches, so a
 * FIFO, a device (`/dev/zero`) or a directory named by a project is refused instead of hanging
 * yard or filling its memory.
 */
import {readFileSync, realpathSync, statSync} from 'node:fs'
import path from 'node:path'

import {InputError, RefusedError} from '../../../sdk/errors.js'

/** The largest file yard reads for a project (bytes): compose and env files are kilobytes. */
export const MAX_PROJECT_FILE_BYTES = 16 * 1024 * 1024

/** The directory every file read must lie in (real paths) while a confined resolution runs. */
let confinement: string | undefined

/**
 * Runs `resolve` (synchronous: nothing else runs meanwhile) with every project file it reads
 * confined to `root` (an untrusted worktree, docs/worktrees.md "Untrusted worktrees"): a compose,
 * include, extends, `.env` or `env_file` file whose real path lies outside is refused. Without
 * `root`, runs it as is.
 * @throws RefusedError (exit 3) from readProjectFile for a file outside `root`.
 */
export function withConfinement<T>(root: string | undefined, resolve: () => T): T {
  if (root === undefined) return resolve()
  const previous = confinement
  confinement = realpathSync(root)
  try {
    return resolve()
  } finally {
    confinement = previous
  }
}

/**
 * `file`'s real path; for a path that does not exist, its nearest existing directory's real path
 * with the rest appended, so that a missing file outside the root is refused like a present one
 * (whether a host path exists is nothing an untrusted compose file may learn).
 */
function realOrNearest(file: string): string {
  const rest: string[] = []
  let current = path.resolve(file)
  for (;;) {
    try {
      return path.join(realpathSync(current), ...rest)
    } catch {
      const parent = path.dirname(current)
      if (parent === current) return path.resolve(file)
      rest.unshift(path.basename(current))
      current = parent
    }
  }
}

/**
 * Refuses (RefusedError, exit 3) a file outside the root of a confined resolution
 * (withConfinement), present or not; nothing outside one.
 */
export function checkConfined(file: string, what: string): void {
  if (confinement === undefined) return
  const real = realOrNearest(file)

  const relative = path.relative(confinement, real)
  if (relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))) return
  throw new RefusedError(
    `the untrusted worktree's compose project reads the ${what} ${file}${real === file ? '' : ` (${real})`}, outside ${confinement}`,
    {
      why: 'yard reads compose and env files on the host while rendering; an untrusted worktree may make it read files inside that worktree only, so none of the host reaches its containers',
      fix: 'move that file into the worktree or drop the reference; or, if you trust its code, `yard worktree trust NAME --trusted`',
    },
  )
}

/**
 * The UTF-8 text of `file`, a regular file (symbolic links followed) of at most
 * MAX_PROJECT_FILE_BYTES.
 * @param what what the file is, for the message (`compose file`, `env file`)
 * @param fix how to correct the reference
 * @throws InputError (exit 2) when it is missing, unreadable, not a regular file or too large;
 *   RefusedError (exit 3) outside the root of a confined resolution (withConfinement).
 */
export function readProjectFile(file: string, what: string, fix: string): string {
  checkConfined(file, what)
  let size: number
  try {
    const stat = statSync(file)
    if (!stat.isFile()) {
      throw new InputError(`the ${what} ${file} is not a regular file`, {
        why: `it is a ${stat.isDirectory() ? 'directory' : stat.isFIFO() ? 'named pipe (FIFO)' : 'device or socket'}; yard reads only regular files, so that nothing can hang or flood it`,
        fix,
      })
    }

    size = stat.size
  } catch (error) {
    if (error instanceof InputError) throw error
    throw new InputError(`cannot read ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, {
      fix,
      cause: error,
    })
  }

  if (size > MAX_PROJECT_FILE_BYTES) {
    throw new InputError(`the ${what} ${file} is too large (${size} bytes)`, {
      why: `yard reads project files of at most ${MAX_PROJECT_FILE_BYTES} bytes`,
      fix,
    })
  }

  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    throw new InputError(`cannot read ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, {
      fix,
      cause: error,
    })
  }
}
