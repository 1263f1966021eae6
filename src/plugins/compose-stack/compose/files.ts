/**
 * Which compose files a checkout's project is made of (DESIGN.md §4.2; compose-go
 * `cli/options.go`): `[stack] files` when set; else `COMPOSE_FILE` (the environment, then the
 * checkout's `.env`), split on `COMPOSE_PATH_SEPARATOR` (default `:`); else the first that exists
 * of `compose.yaml`, `compose.yml`, `docker-compose.yml`, `docker-compose.yaml`, plus the first
 * that exists of `compose.override.yml`, `compose.override.yaml`, `docker-compose.override.yml`,
 * `docker-compose.override.yaml` (one of these names that is no readable regular file is an
 * error). Relative paths are against the checkout. Unlike Compose, the
 * default files are not searched for in parent directories: a checkout is the project.
 */
import {accessSync, constants, existsSync, lstatSync, readlinkSync, statSync} from 'node:fs'
import path from 'node:path'

import type {Env, ResolveWarning} from './types.js'

import {InputError} from '../../../sdk/errors.js'

/** compose-go's DefaultFileNames, in its order of preference. */
export const DEFAULT_FILE_NAMES = ['compose.yaml', 'compose.yml', 'docker-compose.yml', 'docker-compose.yaml'] as const
/** compose-go's DefaultOverrideFileNames, in its order of preference. */
export const DEFAULT_OVERRIDE_FILE_NAMES = [
  'compose.override.yml',
  'compose.override.yaml',
  'docker-compose.override.yml',
  'docker-compose.override.yaml',
] as const

export interface FileSelection {
  /** Absolute, in merge order; empty: the checkout is box-only. */
  files: string[]
  /** How they were chosen, for messages. */
  source: 'configured' | 'COMPOSE_FILE' | 'default'
}

export interface FileSelectionInput {
  checkoutPath: string
  configuredFiles?: string[]
  configuredOrigin?: string
  /** The shell environment. */
  env: Env
  /** The checkout's `.env`, parsed (empty when there is none). */
  checkoutDotenv: Readonly<Record<string, string>>
  /** Where the checkout's `.env` is, for messages. */
  checkoutDotenvFile: string
  warn: (warning: ResolveWarning) => void
}

/**
 * Selects the compose files of a checkout.
 * @throws InputError (exit 2) when a configured or `COMPOSE_FILE` file does not exist, naming it
 *   and where it was set.
 */
export function selectComposeFiles(input: FileSelectionInput): FileSelection {
  const {checkoutPath} = input
  if (input.configuredFiles !== undefined) {
    const origin = input.configuredOrigin ?? 'yard.toml'
    return {
      files: input.configuredFiles.map((file) =>
        existing(checkoutPath, file, `[stack] files (${origin})`, `correct [stack] files in ${origin}`),
      ),
      source: 'configured',
    }
  }

  const fromEnv = input.env.COMPOSE_FILE
  const composeFile = fromEnv || input.checkoutDotenv.COMPOSE_FILE
  if (composeFile) {
    const where = fromEnv ? 'the environment' : input.checkoutDotenvFile
    const separator = input.env.COMPOSE_PATH_SEPARATOR || input.checkoutDotenv.COMPOSE_PATH_SEPARATOR || path.delimiter
    const files = composeFile
      .split(separator)
      .filter((file) => file !== '')
      .map((file) => existing(checkoutPath, file, `COMPOSE_FILE (${where})`, `correct COMPOSE_FILE in ${where}`))
    return {files, source: 'COMPOSE_FILE'}
  }

  const first = firstExisting(checkoutPath, DEFAULT_FILE_NAMES, input.warn)
  if (first === undefined) return {files: [], source: 'default'}
  const override = firstExisting(checkoutPath, DEFAULT_OVERRIDE_FILE_NAMES, input.warn)
  return {files: override === undefined ? [first] : [first, override], source: 'default'}
}

function existing(checkoutPath: string, file: string, where: string, fix: string): string {
  const absolute = path.resolve(checkoutPath, file)
  if (!existsSync(absolute)) {
    throw new InputError(`compose file ${absolute} does not exist`, {
      why: `${where} lists ${file}, relative to the checkout ${checkoutPath}`,
      fix: `create it, or ${fix}`,
    })
  }

  return absolute
}

/**
 * @throws InputError when one of `names` exists but is no readable regular file (a directory, a
 *   dangling symbolic link, a FIFO, no read permission): silently passing it over would make
 *   the checkout box-only, or pick another file, without a word.
 */
function firstExisting(
  directory: string,
  names: readonly string[],
  warn: FileSelectionInput['warn'],
): string | undefined {
  const found = names.map((name) => path.join(directory, name)).filter((file) => isReadableFile(file))
  if (found.length > 1) {
    warn({
      kind: 'multiple-compose-files',
      file: found[0],
      message: `found ${found.map((file) => path.basename(file)).join(', ')} in ${directory}; using ${path.basename(found[0])}`,
    })
  }

  return found[0]
}

/** False when nothing of the name exists; true for a readable regular file (links followed). */
function isReadableFile(file: string): boolean {
  try {
    lstatSync(file)
  } catch {
    return false
  }

  let why: string
  try {
    const stat = statSync(file)
    if (stat.isFile()) {
      accessSync(file, constants.R_OK)
      return true
    }

    why = `it is a ${stat.isDirectory() ? 'directory' : stat.isFIFO() ? 'named pipe (FIFO)' : 'device or socket'}`
  } catch (error) {
    const {code} = error as NodeJS.ErrnoException
    why =
      code === 'ENOENT'
        ? `it is a symbolic link to ${readlinkSync(file)}, which does not exist`
        : `it cannot be read (${code ?? String(error)})`
  }

  throw new InputError(`${file} is not a readable compose file`, {
    why: `${why}; yard reads ${path.basename(file)} as the checkout's compose file, and will not run the checkout as box-only while it is there`,
    fix: `make ${file} a readable regular file, or remove it (or set [stack] files to the compose files to use)`,
  })
}
