/**
 * Atomic file replacement: the text goes to a temporary file next to the target, which is then
 * renamed over it, so a reader sees the old file or the new one, never half of one.
 */
import {promises as fs} from 'node:fs'
import path from 'node:path'

/**
 * Writes `text` to `file` through a temporary sibling and a rename, keeping an existing file's
 * mode; a symbolic link is followed (its target is replaced) unless `followLinks` is false (a
 * record only yard writes: the link itself is replaced, nothing is written through it). With
 * `replace: false` the final step is link(), which refuses (EEXIST) an existing target, so two
 * writers racing never clobber each other.
 * @throws the fs error (ENOENT, ENOTDIR, EACCES, EEXIST, ELOOP for a cycle of links …); the
 *   temporary file never stays behind.
 */
export async function atomicWrite(
  link: string,
  text: string,
  options: {followLinks?: boolean; replace?: boolean} = {},
): Promise<void> {
  // Through a symbolic link, the file it points at is replaced and the link stays a link.
  const file = options.followLinks === false ? link : await linkTarget(link)
  const temp = path.join(
    path.dirname(file),
    `.${path.basename(file)}.tmp-${process.pid}-${Math.random().toString(16).slice(2)}`,
  )
  try {
    await fs.writeFile(temp, text, {flag: 'wx'})
    // Of a regular file only: with followLinks false `file` may be a link, whose own mode is 0777.
    const mode = await fs.lstat(file).then(
      (stat) => (stat.isFile() ? stat.mode & 0o7777 : undefined),
      () => undefined,
    )
    if (mode !== undefined) await fs.chmod(temp, mode)
    await (options.replace === false ? fs.link(temp, file) : fs.rename(temp, file))
  } finally {
    await fs.rm(temp, {force: true})
  }
}

/** Links followed before a chain counts as a cycle: Linux's own limit (MAXSYMLINKS). */
const MAX_LINKS = 40

/**
 * The path a symbolic link points at (resolved against its directory, link after link), else
 * `file` itself.
 * @throws an ELOOP error after MAX_LINKS links (a cycle).
 */
async function linkTarget(file: string): Promise<string> {
  let current = file
  for (let hops = 0; hops <= MAX_LINKS; hops++) {
    const target = await fs.readlink(current).catch(() => undefined)
    if (target === undefined) return current
    current = path.resolve(path.dirname(current), target)
  }

  throw Object.assign(new Error(`ELOOP: too many symbolic links, ${file}`), {code: 'ELOOP', path: file})
}
