import {boundLines} from '../../sdk/errors.js'

/**
 * What a failed git command said, in its meaningful lines: those starting with `fatal:` or
 * `error:` (git's advice around them, such as "Please make sure you have the correct access
 * rights and the repository exists.", is left out), else its last line.
 */
export function gitFailure(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
  const meaningful = lines.filter((line) => /^(fatal|error):/.test(line))
  // As in errors (boundLines): a disk-full fetch says `error:` once per object.
  return boundLines((meaningful.length > 0 ? meaningful : lines.slice(-1)).join('\n')).replaceAll('\n', '; ')
}
