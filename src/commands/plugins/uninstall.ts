import {Args} from '@oclif/core'
import {commands} from '@oclif/plugin-plugins'

const BaseUninstall: (typeof commands)['plugins:uninstall'] = commands['plugins:uninstall']

/** `yard plugins uninstall`: @oclif/plugin-plugins' command, also as `rm` like every topic's removal. */
export default class PluginsUninstall extends BaseUninstall {
  static aliases = [...BaseUninstall.aliases, 'plugins:rm']
  // Never read from standard input (oclif would take piped text for the plugin to remove).
  static args = {plugin: Args.string({description: 'plugin to uninstall', ignoreStdin: true})}
}
