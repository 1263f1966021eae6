/**
 * Atomic file replacement: the text goes to a temporary file next to the target, which is then
 * renamed over it, so a reader sees the old file or the new one, never half of one.
 */
import {promises as fs} from 'node:fs'
import path from 'node:path'

/**
 * Writes `text` to `file` through a temporary sibling and a rename, keeping an existing file's
 * mode; a symbolic link is followed (its target is replaced). With `replace: false` the final step
 * is link(), which refuses (EEXIST) an existing
 * target, so two writers racing never clobber each other.
 * @throws the fs error (ENOENT, ENOTDIR, EACCES, EEXIST …); the temporary file never stays behind.
 */
export async function atomicWrite(link: string, text: string, options: {replace?: boolean} = {}): Promise<void> {
  // Through a symbolic link, the file it points at is replaced and the link stays a link.
  const file = await linkTarget(link)
  const temp = path.join(
    path.dirname(file),
    `.${path.basename(file)}.tmp-${process.pid}-${Math.random().toString(16).slice(2)}`,
  )
  try {
    await fs.writeFile(temp, text, {flag: 'wx'})
    const mode = await fs.stat(file).then(
      (stat) => stat.mode & 0o7777,
      () => undefined,
    )
    if (mode !== undefined) await fs.chmod(temp, mode)
    await (options.replace === false ? fs.link(temp, file) : fs.rename(temp, file))
  } finally {
    await fs.rm(temp, {force: true})
  }
}

/** The path a symbolic link points at (resolved against its directory), else `file` itself. */
async function linkTarget(file: string): Promise<string> {
  const target = await fs.readlink(file).catch(() => undefined)
  return target === undefined ? file : linkTarget(path.resolve(path.dirname(file), target))
}
