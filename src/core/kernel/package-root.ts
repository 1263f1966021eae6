/**
 * Where yard's own package is installed, and which build of it runs: for the code that reads the
 * package's files (its package.json, the hook files, the build id) by path.
 */
import {existsSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {readKeptFile} from './kept-file.js'

/** The directory of this package's package.json (src/core/kernel from source, dist/chunks bundled). */
export function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  while (!existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir)
  return dir
}

/**
 * The id of the running build: the content hash scripts/bundle.mjs writes to `dist/build-id`
 * (every .js file of dist/ and its path), else undefined (run from source, or a build without it).
 */
export function buildId(): string | undefined {
  const id = readKeptFile(path.join(packageRoot(), 'dist', 'build-id'), 4096)?.trim() ?? ''
  return /^[0-9a-f]{64}$/.test(id) ? id : undefined
}
