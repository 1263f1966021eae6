/**
 * yard's default image (DESIGN.md §8): `sh`, `git` and core utilities for the box and sandboxes,
 * built locally — no registry answers here — from a `debootstrap --variant=minbase` root
 * filesystem imported with `podman import`, and tagged by the hash of its recipe so a changed
 * recipe is a new tag and an unchanged one is built once per machine.
 */
import {promises as fs} from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import type {YardContext} from '../kernel/context.js'

import {OperationError} from '../../sdk/errors.js'
import {withLock} from '../../sdk/lock.js'
import {stateDir} from '../kernel/state.js'

/** Everything that decides the image's content; its hash is the tag. */
export const DEFAULT_IMAGE_RECIPE = {
  tool: 'debootstrap',
  suite: 'bookworm',
  variant: 'minbase',
  // git-lfs: its package turns the lfs filter on system-wide, so a sandbox's checkout smudges LFS files.
  include: ['git', 'git-lfs', 'ca-certificates'],
  mirror: 'https://deb.debian.org/debian',
  cmd: ['sleep', 'infinity'],
  // Trimmed after debootstrap: package caches and lists are not needed at run time.
  trim: ['var/cache/apt/archives', 'var/lib/apt/lists'],
} as const

export const DEFAULT_IMAGE_REPOSITORY = 'localhost/yard-default'

/** `localhost/yard-default:<first 12 hex of sha256(recipe)>`. */
export function defaultImageTag(recipe: object = DEFAULT_IMAGE_RECIPE): string {
  return `${DEFAULT_IMAGE_REPOSITORY}:${process.getBuiltinModule('node:crypto').createHash('sha256').update(JSON.stringify(recipe)).digest('hex').slice(0, 12)}`
}

/** True when the engine has an image of that name. */
export async function imageExists(context: YardContext, image: string): Promise<boolean> {
  return (await context.runner.run('podman', ['image', 'exists', image], {allowFailure: true})).exitCode === 0
}

export interface ImageBuild {
  image: string
  /** False when the tag existed and `force` was not set. */
  built: boolean
  /** Wall-clock seconds of the build (0 when not built). */
  seconds: number
}

const BUILD_BUDGET_MS = 15 * 60_000

/**
 * debootstrap's own stages (`I: Retrieving Packages`, `I: Validating dpkg 1.21…`,
 * `I: Extracting …`), each shown as the build's phase; counted, as debootstrap gives no total.
 */
function debootstrapProgress(context: YardContext): {onStdout?: (chunk: string) => void} {
  const port = context.progress
  if (!port) return {}
  let seen = 0
  let partial = ''
  return {
    onStdout(chunk) {
      const lines = (partial + chunk).split('\n')
      partial = lines.pop() ?? ''
      for (const line of lines) {
        const stage = /^I: (\S+)/.exec(line)
        if (stage) port.update({phase: line.slice(3).trim(), done: ++seen, unit: 'stages'})
      }
    },
  }
}

/**
 * Builds yard's default image unless its tag exists (or `force`). One build at a time per state
 * directory (a lock); the root filesystem is built in a temporary directory, removed afterwards.
 * @throws OperationError (exit 1) when debootstrap or podman fails (not root, no mirror), with the fix.
 */
export async function buildDefaultImage(context: YardContext, options: {force?: boolean} = {}): Promise<ImageBuild> {
  const image = defaultImageTag()
  const lockPath = path.join(stateDir(context.env), 'locks', 'default-image.lock')
  await fs.mkdir(path.dirname(lockPath), {recursive: true})
  return withLock(
    lockPath,
    {budgetMs: BUILD_BUDGET_MS, purpose: `image build ${image}`, warn: context.warn},
    async () => {
      if (!options.force && (await imageExists(context, image))) return {image, built: false, seconds: 0}
      const started = Date.now()
      const work = await fs.mkdtemp(path.join(os.tmpdir(), 'yard-image-'))
      try {
        const rootfs = path.join(work, 'rootfs')
        const recipe = DEFAULT_IMAGE_RECIPE
        context.progress?.step(`building the root filesystem (debootstrap ${recipe.suite} ${recipe.variant})`)
        const debootstrap = await context.runner.run(
          'debootstrap',
          [`--variant=${recipe.variant}`, `--include=${recipe.include.join(',')}`, recipe.suite, rootfs, recipe.mirror],
          {
            allowFailure: true,
            timeoutMs: BUILD_BUDGET_MS,
            budget: 'image build',
            ...debootstrapProgress(context),
          },
        )
        if (debootstrap.exitCode !== 0) {
          const tail = `${debootstrap.stdout}\n${debootstrap.stderr}`.trim().split('\n').slice(-3).join(' / ')
          throw new OperationError(`could not build ${image}: debootstrap failed (exit ${debootstrap.exitCode})`, {
            why: debootstrap.exitCode === 127 ? 'debootstrap is not installed' : tail || 'debootstrap gave no output',
            fix:
              process.getuid?.() === 0
                ? `check that ${recipe.mirror} answers, then run \`yard image build\` again (scripts/setup-system installs debootstrap)`
                : 'debootstrap needs root: run `sudo yard image build`, or set [box] image to an image you have',
          })
        }

        for (const trimmed of recipe.trim)
          await fs
            .rm(path.join(rootfs, trimmed), {recursive: true, force: true})
            .then(async () => fs.mkdir(path.join(rootfs, trimmed), {recursive: true}))
        context.progress?.step('packing the root filesystem')
        const tarball = path.join(work, 'rootfs.tar')
        await context.runner.run('tar', ['--numeric-owner', '-C', rootfs, '-cf', tarball, '.'], {
          timeoutMs: BUILD_BUDGET_MS,
          budget: 'image build',
        })
        context.progress?.step(`importing ${image}`)
        await context.runner.run(
          'podman',
          [
            'import',
            '--change',
            `CMD ${JSON.stringify(recipe.cmd)}`,
            '--message',
            'yard default image (DESIGN.md §8)',
            tarball,
            image,
          ],
          {timeoutMs: BUILD_BUDGET_MS, budget: 'image build'},
        )
        context.progress?.done()
        return {image, built: true, seconds: Math.round((Date.now() - started) / 1000)}
      } finally {
        await fs.rm(work, {recursive: true, force: true}).catch(() => undefined)
      }
    },
  )
}
