/**
 * Reading the files a compose project names (compose files, `include`/`extends` files, `.env`
 * and `env_file` files): only regular files, and only up to a size no real one reaches, so a
 * FIFO, a device (`/dev/zero`) or a directory named by a project is refused instead of hanging
 * yard or filling its memory.
 */
import {readFileSync, statSync} from 'node:fs'

import {InputError} from '../../../core/errors.js'

/** The largest file yard reads for a project (bytes): compose and env files are kilobytes. */
export const MAX_PROJECT_FILE_BYTES = 16 * 1024 * 1024

/**
 * The UTF-8 text of `file`, a regular file (symbolic links followed) of at most
 * MAX_PROJECT_FILE_BYTES.
 * @param what what the file is, for the message (`compose file`, `env file`)
 * @param fix how to correct the reference
 * @throws InputError (exit 2) when it is missing, unreadable, not a regular file or too large.
 */
export function readProjectFile(file: string, what: string, fix: string): string {
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
    throw new InputError(`cannot read ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, {fix, cause: error})
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
    throw new InputError(`cannot read ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, {fix, cause: error})
  }
}
