#!/usr/bin/env node
/**
 * Bundles the compiled CLI in dist/ (written by tsc) so that a command loads a few files instead
 * of ~500: each entry point becomes one file, code they share goes to dist/chunks/, and the
 * small libraries every command needs (execa, nano-spawn, signal-exit, zod, yaml, smol-toml,
 * env-paths) are inlined.
 * Measured on the CLI's own commands this takes ~150–250 ms off every start.
 *
 * Entry points — the files something outside loads by path:
 * - every command under dist/commands (oclif imports them through the manifest),
 * - the start-up paths under dist/cli that bin/run.js imports without oclif,
 * - the `yard:backends` hook files named in package.json's `oclif.hooks`,
 * - the package's `exports` (`.` and `./backend`, the plugin SDK). Because the SDK is an entry
 *   of the same build, yard and the plugins that import `@yard-dev/cli/backend` share one copy of
 *   the error classes and helpers.
 *
 * Every other package stays an import of node_modules: oclif (one instance with the host), and
 * the large or lazily imported ones (client-node, ink, react, isomorphic-git).
 * Type declarations (.d.ts) are kept; tsc's .js files are replaced by the bundle, and `dist/build-id`
 * names the build (a hash of its files).
 *
 * Usage: node scripts/bundle.mjs   (from the package root, after `tsc -p tsconfig.json`)
 */
import {build} from 'esbuild'
import {createHash} from 'node:crypto'
import {promises as fs} from 'node:fs'
import path from 'node:path'

/** Packages inlined into the bundle; every other bare import stays external. */
const INLINED = new Set(['execa', 'nano-spawn', 'signal-exit', 'zod', 'yaml', 'smol-toml', 'env-paths'])

const root = process.cwd()
const dist = path.join(root, 'dist')
const staging = path.join(root, 'dist.bundle')

/** The package name of a bare import specifier (`@scope/name/sub` → `@scope/name`). */
function packageOf(specifier) {
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
}

async function filesUnder(dir, test) {
  const entries = await fs.readdir(dir, {withFileTypes: true, recursive: true})
  return entries
    .filter((entry) => entry.isFile() && test(entry.name))
    .map((entry) => path.join(entry.parentPath ?? entry.path, entry.name))
}

async function entryPoints() {
  const manifest = JSON.parse(await fs.readFile(path.join(root, 'package.json'), 'utf8'))
  const commands = await filesUnder(path.join(dist, 'commands'), (name) => name.endsWith('.js') && name !== 'base.js')
  // bin/run.js imports the start-up paths that run without oclif (dist/cli) by their path.
  const cli = await filesUnder(path.join(dist, 'cli'), (name) => name.endsWith('.js'))
  const hooks = Object.values(manifest.oclif?.hooks ?? {}).flat()
  const exported = Object.values(manifest.exports ?? {}).filter(
    (file) => typeof file === 'string' && file.endsWith('.js'),
  )
  const named = [...hooks, ...exported].map((file) => path.join(root, file))
  for (const file of named)
    await fs.access(file).catch(() => {
      throw new Error(`bundle: ${path.relative(root, file)} is named in package.json but tsc did not write it`)
    })
  return [...new Set([...commands, ...cli, ...named])].sort()
}

/**
 * zod re-exports all of its ~50 message locales as `z.locales`; yard uses English only (the
 * default zod sets itself). Inlining them all costs ~25 ms of parsing on every start, so the
 * locales index resolves to one exporting `en` alone.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(builder) {
    builder.onLoad({filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/}, (args) => ({
      contents: 'export { default as en } from "./en.js";\n',
      loader: 'js',
      resolveDir: path.dirname(args.path),
    }))
  },
}

/** Marks bare imports made by yard's own code external unless the package is inlined. */
const externals = {
  name: 'yard-externals',
  setup(builder) {
    builder.onResolve({filter: /^[^./]/}, (args) => {
      if (args.path.startsWith('node:')) return {external: true}
      const fromOwnCode = args.importer.startsWith(dist + path.sep)
      if (fromOwnCode && !INLINED.has(packageOf(args.path))) return {external: true}
      return undefined
    })
  },
}

await fs.rm(staging, {recursive: true, force: true})
const entries = await entryPoints()
await build({
  entryPoints: entries,
  outdir: staging,
  outbase: dist,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  chunkNames: 'chunks/[name]-[hash]',
  sourcemap: 'linked',
  sourcesContent: false,
  // Inlined CommonJS code (yaml, cross-spawn) calls require() for Node's own modules.
  banner: {
    js: "import {createRequire as __yardCreateRequire} from 'node:module'; const require = __yardCreateRequire(import.meta.url);",
  },
  plugins: [externals, zodEnglishOnly],
  logLevel: 'warning',
})

// Replace tsc's JavaScript with the bundle; declarations stay for the SDK's types.
for (const file of await filesUnder(dist, (name) => name.endsWith('.js') || name.endsWith('.js.map'))) await fs.rm(file)
for (const file of await filesUnder(staging, () => true)) {
  const target = path.join(dist, path.relative(staging, file))
  await fs.mkdir(path.dirname(target), {recursive: true})
  await fs.rename(file, target)
}

await fs.rm(staging, {recursive: true, force: true})

// The build's id (src/core/kernel/package-root.ts buildId): a hash of every file of the bundle
// and its path, so that what yard kept from another build (the config cache) is not believed.
const hash = createHash('sha256')
for (const file of (await filesUnder(dist, (name) => name.endsWith('.js'))).sort()) {
  hash.update(path.relative(dist, file) + '\0')
  hash.update(await fs.readFile(file))
}

await fs.writeFile(path.join(dist, 'build-id'), hash.digest('hex') + '\n')
process.stdout.write(`bundle: ${entries.length} entry points into dist/\n`)
