#!/usr/bin/env -S node --import tsx --no-warnings
// Runs the TypeScript sources directly. oclif maps dist/ to src/ in development; the manifest
// (a build product for the shipped CLI) is ignored, so a stale one never hides a command in src/.
import path from 'node:path'
import {fileURLToPath} from 'node:url'

process.env.NODE_ENV ??= 'development'
const {Config, Plugin, execute} = await import('@oclif/core')
const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const rootPlugin = new Plugin({root, isRoot: true, ignoreManifest: true})
await rootPlugin.load()
const config = await Config.load({root, plugins: new Map([[rootPlugin.name, rootPlugin]])})
await config.loadPluginsAndCommands({force: true})

await execute({development: true, dir: import.meta.url, loadOptions: config})
