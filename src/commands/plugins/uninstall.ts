import {commands} from '@oclif/plugin-plugins'

const BaseUninstall: (typeof commands)['plugins:uninstall'] = commands['plugins:uninstall']

/** `yard plugins uninstall`: @oclif/plugin-plugins' command, also as `rm` like every topic's removal. */
export default class PluginsUninstall extends BaseUninstall {
  static aliases = [...BaseUninstall.aliases, 'plugins:rm']
}
