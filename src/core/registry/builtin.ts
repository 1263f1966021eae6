/**
 * The registry of yard's own backends, built without oclif (DESIGN.md §7): for a command that
 * starts without oclif's configuration (`yard exec`'s start-up path, src/cli/fast-exec.ts) when
 * no plugin is installed or linked, so that the built-ins are all there is to register.
 */
import {existsSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'

import {BACKENDS_HOOK, type Registry, registryOf} from './registry.js'

/** The directory of this package's package.json (src/core/registry from source, dist/chunks bundled). */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  while (!existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir)
  return dir
}

interface OwnPackage {
  name: string
  version: string
  oclif?: {hooks?: Record<string, string | string[]>}
}

/**
 * The registry oclif's `loadRegistry` gives when yard's own package is the only plugin with
 * `yard:backends` hooks: each hook file its package.json names is imported and called, in order,
 * and its result checked the same way (`registryOf`). Run from source (a `.ts` module), the hooks'
 * `dist/…js` paths are read as their `src/…ts` files, as oclif's tsPath does in development.
 * Never rejects because of a hook: a failure is a `broken` entry, as with oclif.
 */
export async function builtinRegistry(): Promise<Registry> {
  const root = packageRoot()
  const own = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as OwnPackage
  const declared = own.oclif?.hooks?.[BACKENDS_HOOK] ?? []
  const fromSource = import.meta.url.endsWith('.ts')
  const results: unknown[] = []
  const failures: string[] = []
  for (const target of typeof declared === 'string' ? [declared] : declared) {
    const file = fromSource ? target.replace(/^\.\/dist\//, './src/').replace(/\.js$/, '.ts') : target
    try {
      const module = (await import(pathToFileURL(path.join(root, file)).href)) as {default?: unknown}
      if (typeof module.default === 'function') results.push(await (module.default as () => unknown)())
      else failures.push(`its ${BACKENDS_HOOK} hook ${target} exports no function`)
    } catch (error) {
      failures.push(`its ${BACKENDS_HOOK} hook threw: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  return registryOf([{plugin: {name: own.name, version: own.version}, results, failures}])
}
