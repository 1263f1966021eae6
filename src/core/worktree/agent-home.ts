/**
 * Where coding agents keep their transcripts, so `yard worktree remove` can archive them
 * (DESIGN.md §4.1, §4.2). In the box: a per-checkout agent home `<checkout>/.yard/agent-home/`,
 * inside the mounted checkout, with each CLI pointed there by the variable it documents:
 *  - Claude Code: `CLAUDE_CONFIG_DIR` relocates its whole configuration directory (`~/.claude`),
 *    transcripts under `projects/` included;
 *  - Codex: `CODEX_HOME` is the root of its state, sessions included, default `~/.codex`; the
 *    directory must exist (developers.openai.com/codex/environment-variables);
 *  - Gemini CLI: `GEMINI_CLI_HOME` is the root of its user-level configuration and storage; it
 *    creates `.gemini/` inside.
 * On the host, the per-path stores those CLIs keep for a working directory:
 *  - Claude Code: `~/.claude/projects/<slug>/`, the slug being the absolute path with every
 *    character outside `[A-Za-z0-9]` replaced by `-`, runs not collapsed
 *    (anthropics/claude-code#70076); under `$CLAUDE_CONFIG_DIR/projects/` when that is set;
 *  - Gemini CLI: `~/.gemini/tmp/<dir>/`, `<dir>` being the SHA-256 of the path (older versions)
 *    or a slug whose `.project_root` file holds the path (newer ones).
 * Codex's host sessions are filed by date, not by path, and are left alone.
 */
import {promises as fs} from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import type {YardContext} from '../kernel/context.js'
import type {Workspace} from '../workspace/workspace.js'

import {RefusedError} from '../../sdk/errors.js'
import {adminDirOf} from '../workspace/git-link.js'

/** The agent home, relative to the checkout. */
export const AGENT_HOME_DIR = path.join('.yard', 'agent-home')

/** The variables that send each agent CLI's state into `<checkout>/.yard/agent-home/<cli>/`. */
export function agentHomeEnv(checkout: string): Record<string, string> {
  const home = path.join(checkout, AGENT_HOME_DIR)
  return {
    CLAUDE_CONFIG_DIR: path.join(home, 'claude'),
    CODEX_HOME: path.join(home, 'codex'),
    GEMINI_CLI_HOME: path.join(home, 'gemini'),
  }
}

/**
 * Creates the agent home's directories (Codex refuses a `CODEX_HOME` that does not exist), never
 * through a symbolic link: code in the box can make `.yard` one, and yard runs on the host.
 * @throws RefusedError (exit 3) when `.yard` or a directory below it is a symbolic link.
 */
export async function ensureAgentHome(checkout: string): Promise<void> {
  const home = path.join(checkout, AGENT_HOME_DIR)
  for (const dir of [path.join(checkout, '.yard'), home, ...Object.values(agentHomeEnv(checkout))]) {
    const stat = await fs.lstat(dir).catch(() => undefined)
    if (stat?.isSymbolicLink()) {
      throw new RefusedError(`${dir} is a symbolic link (to ${await fs.readlink(dir)})`, {
        why: 'yard creates the agent home inside the checkout and would create it wherever the link points, outside the checkout',
        fix: `remove the link (\`rm ${dir}\`) and run the command again; yard makes the directory`,
      })
    }

    if (!stat) await fs.mkdir(dir)
  }
}

/** Claude Code's directory name for a working directory under `projects/`. */
export function claudeProjectSlug(checkout: string): string {
  return checkout.replaceAll(/[^A-Za-z0-9]/g, '-')
}

/** One agent CLI's store of a path: which CLI, and the directory. */
export interface AgentStore {
  agent: 'claude-code' | 'gemini-cli'
  source: string
}

/**
 * The host-side stores of `checkout` that exist, for `env`'s HOME (and `CLAUDE_CONFIG_DIR`).
 * Unreadable directories count as absent.
 */
export async function hostAgentStores(checkout: string, env: NodeJS.ProcessEnv): Promise<AgentStore[]> {
  const home = env.HOME ?? os.homedir()
  const claudeRoots = [
    ...new Set(
      [env.CLAUDE_CONFIG_DIR, path.join(home, '.claude')].filter((root): root is string => root !== undefined),
    ),
  ]
  const stores: AgentStore[] = []
  for (const root of claudeRoots) {
    const source = path.join(root, 'projects', claudeProjectSlug(checkout))
    if (await isDirectory(source)) stores.push({agent: 'claude-code', source})
  }

  const geminiTmp = path.join(home, '.gemini', 'tmp')
  const hashed = process.getBuiltinModule('node:crypto').createHash('sha256').update(checkout).digest('hex')
  for (const entry of await fs.readdir(geminiTmp, {withFileTypes: true}).catch(() => [])) {
    if (!entry.isDirectory()) continue
    const dir = path.join(geminiTmp, entry.name)
    const root = await fs.readFile(path.join(dir, '.project_root'), 'utf8').catch(() => undefined)
    if (entry.name === hashed || root?.trim() === checkout) stores.push({agent: 'gemini-cli', source: dir})
  }

  return stores
}

async function isDirectory(dir: string): Promise<boolean> {
  return (await fs.stat(dir).catch(() => undefined))?.isDirectory() ?? false
}

/**
 * Makes sure git ignores `.yard/` in every checkout of the repository (the agent home holds the
 * agents' credentials and transcripts: never a file to commit, never unsaved work): when `git
 * check-ignore` says `.yard/agent-home/` is not ignored in the box's checkout, `/.yard/` is added
 * to the local exclude file `<git common dir>/info/exclude`, with a note. A failure only warns.
 */
export async function excludeYardDir(context: YardContext, workspace: Workspace, checkout: string): Promise<void> {
  // A linked worktree's git dir from the repository's side, never from the checkout's .git (its box writes that file).
  const admin = adminDirOf(workspace.commonDir, checkout)
  const pinned = admin === undefined ? [] : [`--git-dir=${admin}`, `--work-tree=${checkout}`]
  const ignored = await context.runner.git(
    [...pinned, 'check-ignore', '-q', '--no-index', '--', `${AGENT_HOME_DIR}/`],
    {
      cwd: checkout,
      allowFailure: true,
    },
  )
  if (ignored.exitCode !== 1) return
  const exclude = path.join(workspace.commonDir, 'info', 'exclude')
  try {
    const text = await fs.readFile(exclude, 'utf8').catch(() => '')
    await fs.mkdir(path.dirname(exclude), {recursive: true})
    await fs.appendFile(exclude, `${text === '' || text.endsWith('\n') ? '' : '\n'}/.yard/\n`)
    context.warn(
      `note: added /.yard/ to ${exclude} so that git ignores the box's agent home (\`yard init\` adds it to .gitignore instead)`,
    )
  } catch (error) {
    context.warn(
      `warning: git does not ignore .yard/ and yard could not add it to ${exclude}: ${(error as Error).message}; add it to .gitignore yourself`,
    )
  }
}
