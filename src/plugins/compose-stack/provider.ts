/**
 * The compose provider this backend runs (DESIGN.md §4.2, `[stack] provider`), detected with
 * compose-provider.ts and remembered for an hour in `<state dir>/compose-provider.json`, so that
 * every `yard up` does not start four probe processes. A remembered provider that is no longer
 * installed is detected again.
 */
import {promises as fs} from 'node:fs'
import path from 'node:path'

import type {ProcessRunner} from '../../sdk/process.js'

import {
  COMPOSE_PROVIDERS,
  type ComposeProvider,
  type ComposeProviderId,
  composeProviderShape,
  requireComposeProvider,
} from '../../sdk/compose-provider.js'

/** How long a detection is trusted, in milliseconds. */
export const PROVIDER_MEMORY_MS = 60 * 60_000

interface Remembered {
  preference: string
  id: ComposeProviderId
  version?: string
  /** Epoch milliseconds. */
  detectedAt: number
}

/**
 * The provider for `preference` (`auto` or an id): the remembered one when fresh, else a new
 * detection (remembered when the state directory is writable).
 * @throws OperationError (exit 1) when no provider answers, naming what each said.
 */
export async function composeProvider(
  runner: ProcessRunner,
  stateDir: string,
  preference: string,
  now = Date.now(),
): Promise<ComposeProvider> {
  const file = path.join(stateDir, 'compose-provider.json')
  const remembered = await fs.readFile(file, 'utf8').then(
    (text) => JSON.parse(text) as Remembered,
    () => undefined,
  )
  if (
    remembered &&
    remembered.preference === preference &&
    (COMPOSE_PROVIDERS as readonly string[]).includes(remembered.id) &&
    now - remembered.detectedAt < PROVIDER_MEMORY_MS &&
    now >= remembered.detectedAt
  ) {
    return {id: remembered.id, ...composeProviderShape(remembered.id), version: remembered.version}
  }

  const provider = await requireComposeProvider(runner, {preference: preference as 'auto' | ComposeProviderId})
  const record: Remembered = {preference, id: provider.id, version: provider.version, detectedAt: now}
  await fs
    .mkdir(stateDir, {recursive: true})
    .then(async () => fs.writeFile(file, JSON.stringify(record) + '\n'))
    .catch(() => undefined)
  return provider
}

/** Forgets the remembered provider (after it failed to start at all). */
export async function forgetComposeProvider(stateDir: string): Promise<void> {
  await fs.rm(path.join(stateDir, 'compose-provider.json'), {force: true})
}
