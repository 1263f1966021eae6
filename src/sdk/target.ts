/**
 * The `Target` every backend receives and the context core hands a backend (DESIGN.md §2, §3).
 * Part of the plugin SDK, `@yard-dev/cli/backend` (src/sdk/index.ts).
 */
import type {ProcessRunner} from './process.js'
import type {ProgressPort} from './progress.js'

/** Where an offset came from (DESIGN.md §3.4). */
export type OffsetSource = 'main' | 'env' | 'pin' | 'hash' | 'label'

/** One checkout's or sandbox's identity (DESIGN.md §2, §3). */
export interface Target {
  /** `main` for the main checkout, else the worktree or sandbox name (DNS-1123 label). */
  name: string
  isMain: boolean
  prefix: string
  /** `<prefix>` for main, `<prefix>-<name>` otherwise: compose project, pod name. */
  project: string
  /** Hash of the main checkout's real path; labelled `yard.dev/owner` on everything created. */
  owner: string
  /** 0 for main, 1..89 otherwise. */
  offset: number
  offsetSource: OffsetSource
  /** `[ports]` key → host port (base + offset). */
  ports: Record<string, number>
  /** Absolute path of the targeted checkout (for a sandbox: the main checkout). */
  checkoutPath: string
  mainPath: string
}

/** What core hands a backend when it creates one. */
export interface BackendContext {
  runner: ProcessRunner
  env: NodeJS.ProcessEnv
  /** yard's state directory (absolute). */
  stateDir: string
  warn: (message: string) => void
  /** Where a long operation reports its steps (`ProgressPort`); absent: report nothing. */
  progress?: ProgressPort
  /** `[cluster]` settings, given to sandbox backends (a cluster runtime needs them). */
  cluster?: ClusterSettings
}

/** What a cluster runtime needs from `[cluster]` (DESIGN.md §5.2; docs/configuration.md). */
export interface ClusterSettings {
  /** Kube context; undefined: the kubeconfig's current context. */
  context?: string
  namespace: string
  /** `[cluster] cache-root`: the caches' directory on every node. */
  cacheRoot: string
  /** `refreshInterval` of the Repos a create declares (`10m`); undefined: the agent's interval. */
  refreshInterval?: string
  /** Budget for a new pod to become Ready, ms (`[cluster] ready-timeout-seconds`). */
  readyTimeoutMs: number
  /** Budget for the pod's node to report its caches present, ms (`[cluster] cache-timeout-seconds`). */
  cacheTimeoutMs: number
}
