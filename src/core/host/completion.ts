/**
 * Shell completion of yard's own words (`yard complete`, called by the scripts of `yard
 * completion bash|zsh`): commands and flags from the command table, and the values only yard
 * knows — worktree names, sandbox names, `SANDBOX/BRANCH`, a checkout's services, cache urls.
 * Every lookup is best effort: one that fails or is slow completes nothing rather than an error.
 */
import type {YardContext} from '../kernel/context.js'
import type {Backends} from '../registry/backends.js'

import {openCache} from '../cache/cache.js'
import {readPools} from '../sandbox/pool.js'
import {openSandboxes, requireSandbox} from '../sandbox/sandbox.js'
import {openStack, stackSpec} from '../stack/stack.js'
import {openWorkspace, worktreesUnderRoot} from '../workspace/workspace.js'

/** One command as completion sees it: its id and aliases (`worktree:list`, `wt:ls`) and its flags. */
export interface CompletionCommand {
  id: string
  names: string[]
  /** `--name` and `-c` spellings of every flag, and whether it takes a value. */
  flags: Array<{name: string; char?: string; takesValue: boolean}>
}

/** What a word can be, by the command and its position. */
type ValueKind =
  'targets' | 'worktrees' | 'anywhere' | 'sandboxes' | 'sandbox-branches' | 'services' | 'caches' | 'pools'

/** The positional values of each command (by canonical id); logs' words are all services. */
const POSITIONAL: Record<string, ValueKind> = {
  up: 'targets',
  down: 'targets',
  ps: 'targets',
  nuke: 'targets',
  env: 'targets',
  config: 'targets',
  ports: 'targets',
  'box:up': 'targets',
  'box:down': 'targets',
  'box:ps': 'targets',
  'worktree:remove': 'worktrees',
  'worktree:trust': 'worktrees',
  exec: 'anywhere',
  shell: 'anywhere',
  'sandbox:attach': 'sandboxes',
  'sandbox:forward': 'sandboxes',
  'sandbox:manifest': 'sandboxes',
  'sandbox:rm': 'sandboxes',
  'sandbox:pull': 'sandbox-branches',
  'sandbox:pool:rm': 'pools',
  logs: 'services',
  'cache:fetch': 'caches',
  'cache:evict': 'caches',
  'cache:maintain': 'caches',
  'cache:identity': 'caches',
}

/** The values of flags that name a checkout or a sandbox. */
const FLAG_VALUES: Record<string, ValueKind> = {worktree: 'targets', sandbox: 'sandboxes'}

/** How long one lookup (the engine, a cluster) may take before it completes nothing, in ms. */
const LOOKUP_BUDGET_MS = 2500

async function within<T>(work: Promise<T>, late: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      work.catch(() => late),
      new Promise<T>((resolve) => {
        timer = setTimeout(() => resolve(late), LOOKUP_BUDGET_MS)
      }),
    ])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * The candidates for the last of `words` (the words after `yard`, the last one being completed,
 * possibly empty), those that start with it, in order and without repeats.
 */
export async function completionCandidates(
  context: YardContext,
  backends: Backends,
  commands: readonly CompletionCommand[],
  words: readonly string[],
): Promise<string[]> {
  const current = words.at(-1) ?? ''
  const before = words.slice(0, -1)
  const matches = (values: string[]) => [...new Set(values)].filter((value) => value.startsWith(current))
  const byName = new Map(commands.flatMap((command) => command.names.map((name) => [name, command] as const)))
  let {length} = before
  while (length > 0 && !byName.has(before.slice(0, length).join(':'))) length--
  const command = length > 0 ? byName.get(before.slice(0, length).join(':')) : undefined
  if (!command) {
    // Topics and commands: the next word of every name under the words typed so far.
    const prefix = before.join(':')
    const next = [...byName.keys()]
      .filter((name) => prefix === '' || name.startsWith(`${prefix}:`))
      .map((name) => name.slice(prefix === '' ? 0 : prefix.length + 1).split(':', 1)[0])
    return matches(next)
  }

  const rest = before.slice(length)
  const flagOf = (word: string) =>
    command.flags.find((flag) => word === `--${flag.name}` || (flag.char !== undefined && word === `-${flag.char}`))
  const previous = flagOf(rest.at(-1) ?? '')
  if (previous?.takesValue) return matches(await values(context, backends, FLAG_VALUES[previous.name], rest))
  if (current.startsWith('-')) return matches(command.flags.flatMap((flag) => [`--${flag.name}`]))
  if (rest.includes('--')) return []
  // Words already given as arguments (not flags, not a flag's value): one NAME per command, and
  // each service once (`yard logs web <TAB>` offers the others).
  const given = rest.filter((word, index) => !word.startsWith('-') && !flagOf(rest[index - 1] ?? '')?.takesValue)
  const kind = POSITIONAL[command.id]
  if (kind !== 'services' && given.length > 0) return []
  return matches((await values(context, backends, kind, rest)).filter((value) => !given.includes(value)))
}

/** The value of `--worktree`/`-w` among the words, for services of the checkout it names. */
function namedWorktree(words: readonly string[]): string | undefined {
  const index = words.findIndex((word) => word === '--worktree' || word === '-w')
  return index === -1 ? undefined : words[index + 1]
}

async function values(
  context: YardContext,
  backends: Backends,
  kind: ValueKind | undefined,
  words: readonly string[],
): Promise<string[]> {
  switch (kind) {
    case 'targets': {
      return ['main', ...(await worktreeNames(context))]
    }

    case 'worktrees': {
      return worktreeNames(context)
    }

    case 'anywhere': {
      const [worktrees, sandboxes] = await Promise.all([worktreeNames(context), sandboxBranches(context, backends)])
      return ['main', ...worktrees, ...sandboxes]
    }

    case 'sandboxes': {
      return (await sandboxBranches(context, backends)).filter((name) => !name.includes('/'))
    }

    case 'sandbox-branches': {
      return sandboxBranches(context, backends)
    }

    case 'services': {
      return services(context, backends, namedWorktree(words))
    }

    case 'caches': {
      return within(
        openCache(context, backends).then(async ({cache, root}) =>
          (await cache.list(root)).flatMap((row) => (row.url === null ? [] : [row.url])),
        ),
        [],
      )
    }

    case 'pools': {
      return within(
        openWorkspace(context).then(async (workspace) =>
          (await readPools(context.env, workspace.owner)).map((pool) => pool.id),
        ),
        [],
      )
    }

    default: {
      return []
    }
  }
}

async function worktreeNames(context: YardContext): Promise<string[]> {
  return within(
    openWorkspace(context).then(async (workspace) =>
      (await worktreesUnderRoot(workspace, context)).map((row) => row.name),
    ),
    [],
  )
}

/** Every sandbox name, then `NAME/BRANCH` for the branch attached at create and every other one attached since. */
async function sandboxBranches(context: YardContext, backends: Backends): Promise<string[]> {
  return within(
    (async () => {
      const session = await openSandboxes(context, backends)
      const names: string[] = []
      const branches: string[] = []
      for (const summary of await session.backend.list(session.workspace.prefix, {
        timeoutMs: LOOKUP_BUDGET_MS,
        runtime: session.runtime,
      })) {
        names.push(summary.name)
        const {sandbox} = await requireSandbox(context, session, summary.name)
        branches.push(`${summary.name}/${sandbox.spec.branch}`)
        const attached = sandbox.phase === 'Running' ? await session.backend.worktrees(sandbox) : []
        for (const worktree of attached)
          if (worktree.branch !== null) branches.push(`${summary.name}/${worktree.branch}`)
      }

      return [...names, ...branches]
    })(),
    [],
  )
}

/** The services of the checkout the words name (else the one `yard logs` would target). */
async function services(context: YardContext, backends: Backends, worktree: string | undefined): Promise<string[]> {
  return within(
    (async () => {
      const session = await openStack(context, backends, worktree)
      const spec = stackSpec(session, context)
      const plan = spec && (await session.stack.plan?.(session.target, spec))
      return Object.keys(plan?.compose.services ?? {})
    })(),
    [],
  )
}
