/**
 * The registry of yard's own backends, built without oclif (DESIGN.md §7): for a command that
 * starts without oclif's configuration (`yard exec`'s start-up path, src/cli/fast-exec.ts) when
 * no plugin is installed or linked, so that the built-ins are all there is to register.
 */
import {readFileSync} from 'node:fs'
import path from 'node:path'
import {pathToFileURL} from 'node:url'

import type {BackendFactory, FactoryCheck} from '../../sdk/factory.js'

import {CONTRACT_VERSION, contractMajor} from '../../sdk/factory.js'
import {packageRoot} from '../kernel/package-root.js'
import {BACKENDS_HOOK, type Registry, registryOf} from './registry.js'

/** What one hook file gave: its result, or why it gave none. */
type HookFile = {result: unknown} | {failure: string}

interface OwnPackage {
  name: string
  version: string
  oclif?: {hooks?: Record<string, string | string[]>}
}

/**
 * The registry oclif's `loadRegistry` gives when yard's own package is the only plugin with
 * `yard:backends` hooks: each hook file its package.json names is imported and called, in order,
 * and its result registered the same way (`registryOf`, with the check of yard's own factories). Run from source (a `.ts` module), the hooks'
 * `dist/…js` paths are read as their `src/…ts` files, as oclif's tsPath does in development.
 * Never rejects because of a hook: a failure is a `broken` entry, as with oclif.
 */
export async function builtinRegistry(): Promise<Registry> {
  const root = packageRoot()
  const own = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as OwnPackage
  const declared = own.oclif?.hooks?.[BACKENDS_HOOK] ?? []
  const fromSource = import.meta.url.endsWith('.ts')
  // Imported together (one wait, not five in a row); results and failures keep the declared order.
  const outcomes = await Promise.all(
    (typeof declared === 'string' ? [declared] : declared).map(async (target): Promise<HookFile> => {
      const file = fromSource ? target.replace(/^\.\/dist\//, './src/').replace(/\.js$/, '.ts') : target
      try {
        const module = (await import(pathToFileURL(path.join(root, file)).href)) as {default?: unknown}
        if (typeof module.default === 'function') return {result: await (module.default as () => unknown)()}
        return {failure: `its ${BACKENDS_HOOK} hook ${target} exports no function`}
      } catch (error) {
        return {failure: `its ${BACKENDS_HOOK} hook threw: ${error instanceof Error ? error.message : String(error)}`}
      }
    }),
  )
  const results = outcomes.flatMap((outcome) => ('result' in outcome ? [outcome.result] : []))
  const failures = outcomes.flatMap((outcome) => ('failure' in outcome ? [outcome.failure] : []))
  return registryOf([{plugin: {name: own.name, version: own.version}, results, failures}], ownFactory)
}

/**
 * The check of yard's own factories: typed when yard is built, and each passes `checkFactory`
 * (its zod schema) in the tests (test/cli/fast-exec.test.ts compares this registry with oclif's),
 * so the start-up paths need not load zod for them. Only the contract major is compared.
 */
function ownFactory(value: unknown): FactoryCheck {
  const factory = value as BackendFactory
  const major = contractMajor(factory.contract) ?? -1
  return major === CONTRACT_VERSION
    ? {status: 'ok', factory, major}
    : {
        status: 'broken',
        reason: `yard's own backend ${String(factory.id)} declares contract ${String(factory.contract)}`,
      }
}
