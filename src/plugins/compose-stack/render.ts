/**
 * The rendered compose file (DESIGN.md §4.2): the isolated model as YAML in
 * `<state dir>/stacks/<project>/compose.yaml`, handed to the provider as its only `-f`. Its
 * directory holds no `.env`, so a provider that reads `.env` beside the first file
 * (podman-compose 1.0.3 does, over the caller's environment) finds none, and every path in it is
 * absolute, so the provider's working directory does not matter.
 */
import {promises as fs} from 'node:fs'
import path from 'node:path'

import type {Target} from '../../sdk/target.js'

import {OperationError} from '../../sdk/errors.js'

/** Where the rendered file of a project lives. */
export function renderedPath(stateDir: string, project: string): string {
  return path.join(stateDir, 'stacks', project, 'compose.yaml')
}

/**
 * Writes the rendered file (atomically: a temp file renamed over it) and returns its path.
 * @throws OperationError (exit 1) naming the path when the state directory cannot be written.
 */
export async function writeRendered(stateDir: string, target: Target, text: string): Promise<string> {
  const file = renderedPath(stateDir, target.project)
  try {
    await fs.mkdir(path.dirname(file), {recursive: true})
    const temp = `${file}.${process.pid}.tmp`
    await fs.writeFile(temp, text)
    await fs.rename(temp, file)
  } catch (error) {
    throw new OperationError(`cannot write ${file}: ${(error as Error).message}`, {
      why: "yard up hands the compose provider the rendered compose file, kept in yard's state directory, which must be writable; nothing was created",
      fix: 'set YARD_STATE_DIR to a writable directory (or fix the permissions of the one named), then run yard up again',
      cause: error,
    })
  }

  return file
}
