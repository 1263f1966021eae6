/**
 * oclif configurations for tests (DESIGN.md §9 traps): built from the sources, never from a
 * leftover `oclif.manifest.json` or `dist/`, without the developer's own plugins, and with
 * fixture plugins linked in as `yard plugins link` would.
 */
import {Config, Plugin} from '@oclif/core'
import {join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

/** The repository root (where package.json is). */
export const projectRoot = resolve(fileURLToPath(new URL('../..', import.meta.url)))

/** A fixture plugin's directory under test/fixtures/plugins/. */
export function fixturePluginRoot(name: string): string {
  return join(projectRoot, 'test', 'fixtures', 'plugins', name)
}

/**
 * A Config for the project root with the named fixture plugins linked after the CLI's own.
 * Pass it to `runCommand(args, config)`; oclif reloads it with the same plugins, so commands
 * see the fixtures' hooks.
 */
export async function loadTestConfig(fixturePlugins: string[] = []): Promise<Config> {
  const config = await Config.load({root: projectRoot, userPlugins: false})
  // The root plugin discovers commands from src/ even when a build left a manifest behind.
  const root = new Plugin({root: projectRoot, isRoot: true, pjson: config.pjson, ignoreManifest: true})
  await root.load()
  config.plugins.set(root.name, root)
  for (const name of fixturePlugins) {
    const plugin = new Plugin({root: fixturePluginRoot(name), type: 'link'})
    await plugin.load()
    config.plugins.set(plugin.name, plugin)
  }

  return config
}
