/**
 * Agent transcripts (DESIGN.md §4.1): `<checkout>/.yard/transcripts/` is archived before a
 * worktree is removed, to `<archive root>/<prefix>/<name>/`, where the root is
 * `YARD_TRANSCRIPTS_ARCHIVE` → `[worktrees] transcripts-archive` → `<state dir>/transcripts`.
 * Additive: files already in the archive that are as new or newer are kept. The box's agent home
 * (`.yard/agent-home/`) and the host-side per-path stores of agent CLIs (agent-home.ts) go to
 * the same archive, under `agent-home/` and `host/<agent>/`.
 */
import {promises as fs} from 'node:fs'
import path from 'node:path'

import {stateDir} from '../kernel/state.js'
import {AGENT_HOME_DIR, hostAgentStores} from './agent-home.js'

/** Where a checkout keeps its agents' transcripts, relative to the checkout. */
export const TRANSCRIPTS_DIR = path.join('.yard', 'transcripts')

/** The archive directory of one worktree (absolute). A relative configured root is relative to the main checkout. */
export function transcriptsArchive(options: {
  configured?: string
  mainPath: string
  env: NodeJS.ProcessEnv
  prefix: string
  name: string
}): string {
  const root =
    options.configured === undefined
      ? path.join(stateDir(options.env), 'transcripts')
      : path.resolve(options.mainPath, options.configured)
  return path.join(root, options.prefix, options.name)
}

/**
 * `<checkout>/.yard/transcripts` when neither it nor `.yard` is a symbolic link (absent is fine),
 * else undefined: a box writes its worktree, and archiving through a link would copy whatever it
 * names on the host into the archive.
 */
export async function transcriptsDir(checkout: string): Promise<string | undefined> {
  for (const part of ['.yard', TRANSCRIPTS_DIR]) {
    const stat = await fs.lstat(path.join(checkout, part)).catch(() => undefined)
    if (stat?.isSymbolicLink()) return undefined
  }

  return path.join(checkout, TRANSCRIPTS_DIR)
}

/** Whether a directory from below `root` down to `target` (inclusive) is a symbolic link. */
async function linkedBetween(root: string, target: string): Promise<boolean> {
  const parts = path.relative(root, target).split(path.sep).filter(Boolean)
  for (let index = 1; index <= parts.length; index++) {
    const stat = await fs.lstat(path.join(root, ...parts.slice(0, index))).catch(() => undefined)
    if (stat?.isSymbolicLink()) return true
  }

  return false
}

/** Every file below `dir`, relative to it; empty when `dir` does not exist. */
export async function listFiles(dir: string): Promise<string[]> {
  const entries = await fs
    .readdir(dir, {recursive: true, withFileTypes: true})
    .catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return []
      throw error
    })
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort()
}

/**
 * Copies every file of `source` into `archive` (created as needed), keeping modification times;
 * a file the archive already has with the same or a newer time is left alone.
 * @returns how many files were copied and how many kept.
 * @throws the fs error when the archive cannot be created or written (ENOTDIR under a regular
 *   file, EACCES, ENOSPC): the caller decides whether that refuses the removal.
 */
export async function archiveTranscripts(
  source: string,
  archive: string,
  within?: string,
): Promise<{copied: number; kept: number}> {
  let copied = 0
  let kept = 0
  await fs.mkdir(archive, {recursive: true})
  // Checked again here: the worktree's box may have made a link since the plan was made.
  if (within !== undefined && (await linkedBetween(within, source))) return {copied, kept}
  for (const file of await listFiles(source)) {
    const from = path.join(source, file)
    const to = path.join(archive, file)
    const [stat, existing] = await Promise.all([fs.lstat(from), fs.stat(to).catch(() => undefined)])
    // A link is not a transcript: copying it would copy the file it names.
    if (!stat.isFile()) continue
    if (existing && existing.mtimeMs >= stat.mtimeMs) {
      kept++
      continue
    }

    await fs.mkdir(path.dirname(to), {recursive: true})
    await fs.copyFile(from, to)
    await fs.utimes(to, stat.atime, stat.mtime)
    copied++
  }

  return {copied, kept}
}

/**
 * An agent CLI's store archived with the worktree (docs/worktrees.md): the box's agent home, or a
 * host-side per-path store.
 */
export interface AgentStoreArchive {
  /** `box` (the checkout's `.yard/agent-home/`), `claude-code` or `gemini-cli` (host stores). */
  agent: string
  source: string
  /** `<transcripts archive>/agent-home/`, or `<transcripts archive>/host/<agent>/<store's name>/`. */
  archive: string
  files: number
}

/**
 * The agent stores of a checkout that hold files: its `.yard/agent-home/` (when `present`) and the
 * host-side per-path stores of the common agent CLIs (`hostAgentStores`, for `env`'s HOME).
 */
export async function agentStoresOf(
  checkout: string,
  present: boolean,
  archive: string,
  env: NodeJS.ProcessEnv,
): Promise<AgentStoreArchive[]> {
  const candidates = [
    ...(present
      ? [{agent: 'box', source: path.join(checkout, AGENT_HOME_DIR), archive: path.join(archive, 'agent-home')}]
      : []),
    ...(await hostAgentStores(checkout, env)).map((store) => ({
      ...store,
      archive: path.join(archive, 'host', store.agent, path.basename(store.source)),
    })),
  ]
  const counted = await Promise.all(
    candidates.map(async (store) => ({...store, files: (await listFiles(store.source)).length})),
  )
  return counted.filter((store) => store.files > 0)
}
