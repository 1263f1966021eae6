/**
 * The shared test vectors (offsets, url identities). They are read from `../shared/vectors/`
 * beside the checkout when it is there (the source of truth), else from the copy kept in
 * test/vectors/ so a clone on its own still tests against them; a test checks the copy matches.
 */
import {existsSync, readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'

export const sharedVectorsDir = fileURLToPath(new URL('../../../shared/vectors/', import.meta.url))
export const copiedVectorsDir = fileURLToPath(new URL('../vectors/', import.meta.url))

/** Parsed `<name>.json` of the vectors. */
export function readVectors<T>(name: string): T {
  const dir = existsSync(sharedVectorsDir + name) ? sharedVectorsDir : copiedVectorsDir
  return JSON.parse(readFileSync(dir + name, 'utf8')) as T
}
