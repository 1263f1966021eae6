/**
 * oclif's `command_not_found` hook. With `topicSeparator: " "`, oclif reads `yard up feat` as
 * the command id `up:feat` (a word after a command that takes no arguments looks like a
 * subcommand), so the not-found plugin would call it an unknown command (exit 127). When a
 * leading part of the id is a command, the rest are arguments to it: the command runs with
 * them, and its parser refuses them as an unexpected argument (exit 2). Any other id is an
 * unknown command, reported by @oclif/plugin-not-found as before.
 */
import type {Hook} from '@oclif/core'

import notFound from '@oclif/plugin-not-found'

/**
 * Runs the longest command that `options.id` starts with, its other words as arguments; else
 * reports an unknown command.
 */
const hook: Hook<'command_not_found'> = async function (options) {
  const words = options.id.split(':')
  for (let length = words.length - 1; length > 0; length--) {
    const id = words.slice(0, length).join(':')
    if (options.config.findCommand(id))
      return options.config.runCommand(id, [...words.slice(length), ...(options.argv ?? [])])
  }

  return notFound.call(this, options)
}

export default hook
