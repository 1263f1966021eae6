/**
 * Gitignored files picked by gitignore-style patterns (`[worktrees] copy` and `keep-ignored`,
 * docs/configuration.md): git's own matcher applies the patterns (`git ls-files --others
 * --ignored --exclude=…`, gitignore(5)), then `git check-ignore` keeps the files the checkout's
 * own ignore rules really ignore, so a tracked or merely untracked file is never picked.
 */
import {constants, promises as fs} from 'node:fs'
import path from 'node:path'

import type {ProcessRunner} from '../../sdk/process.js'
import type {YardContext} from '../kernel/context.js'

const split = (output: string) => output.split('\0').filter((entry) => entry !== '')

/**
 * The untracked, gitignored files of `checkout` that match one of `patterns`, relative and sorted;
 * yard's own `.yard/` is left out. `--exclude=PATTERN` keeps a pattern from reading as an option.
 * @throws OperationError (exit 1) when git fails.
 */
export async function ignoredMatching(
  runner: ProcessRunner,
  checkout: string,
  patterns: readonly string[],
  gitOptions: readonly string[] = [],
): Promise<string[]> {
  if (patterns.length === 0) return []
  const listed = await runner.git(
    [...gitOptions, 'ls-files', '--others', '--ignored', '-z', ...patterns.map((pattern) => `--exclude=${pattern}`)],
    {cwd: checkout},
  )
  const candidates = split(listed.stdout).filter((file) => !file.startsWith('.yard/'))
  if (candidates.length === 0) return []
  // Exit 1: none of them is ignored.
  const checked = await runner.git([...gitOptions, 'check-ignore', '-z', '--stdin'], {
    cwd: checkout,
    input: candidates.join('\0'),
    allowFailure: true,
  })
  return split(checked.stdout).sort()
}

/**
 * Copies the main checkout's gitignored `files` (`ignoredMatching` of `[worktrees] copy`) into a new
 * worktree, as a reflink where the filesystem can (`COPYFILE_FICLONE`, a plain copy elsewhere);
 * a file the worktree already has is left alone. A symbolic link is copied as the link, never as
 * what it points at (it may point outside the checkout), and nothing is written where a directory
 * of the worktree's own branch is a symbolic link (the file would land outside the worktree). A
 * file that cannot be copied warns.
 * @returns the files copied, relative.
 */
export async function copyIgnoredFiles(
  context: YardContext,
  mainPath: string,
  target: string,
  files: readonly string[],
): Promise<string[]> {
  const copied: string[] = []
  if (files.length === 0) return copied
  const root = await fs.realpath(target)
  for (const file of files) {
    const to = path.join(target, file)
    try {
      await fs.mkdir(path.dirname(to), {recursive: true})
      const parent = path.relative(root, await fs.realpath(path.dirname(to)))
      if (parent.startsWith('..') || path.isAbsolute(parent)) {
        context.warn(
          `warning: did not copy ${file} into ${target}: ${path.dirname(file)} is a symbolic link out of the worktree`,
        )
        continue
      }

      await copyEntry(path.join(mainPath, file), to)
      copied.push(file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
        context.warn(
          `warning: could not copy ${file} from the main checkout into ${target}: ${(error as Error).message}`,
        )
    }
  }

  return copied
}

/**
 * Copies one file, a symbolic link as the link itself (`lstat`): what a link points at may lie
 * outside the checkout. An existing `to` is an `EEXIST` error.
 */
export async function copyEntry(from: string, to: string, options: {overwrite?: boolean} = {}): Promise<void> {
  if ((await fs.lstat(from)).isSymbolicLink()) {
    if (options.overwrite) await fs.rm(to, {force: true})
    await fs.symlink(await fs.readlink(from), to)
    return
  }

  await fs.copyFile(from, to, constants.COPYFILE_FICLONE | (options.overwrite ? 0 : constants.COPYFILE_EXCL))
}
