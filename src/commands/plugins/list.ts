import {commands} from '@oclif/plugin-plugins'

const BaseList: (typeof commands)['plugins'] = commands.plugins

/** `yard plugins list` / `yard plugins ls`: @oclif/plugin-plugins' `yard plugins`, under the verb every topic has. */
export default class PluginsList extends BaseList {
  static aliases = ['plugins:ls']
  static summary = 'List installed plugins'
  static examples = ['<%= config.bin %> plugins list', '<%= config.bin %> plugins ls --core']
}
