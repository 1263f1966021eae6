/**
 * The `[cluster]` settings in the shape the sandbox backends take, apart from sandbox.ts: `yard
 * worktree add` and the cluster commands need them without sandbox.ts's imports (yaml among them).
 */
import type {ClusterSettings} from '../../sdk/target.js'
import type {Workspace} from '../workspace/workspace.js'

/** The `[cluster]` settings a cluster runtime needs (DESIGN.md §5.2; defaults in config.ts). */
export function clusterSettings(workspace: Pick<Workspace, 'config'>): ClusterSettings {
  const {cluster} = workspace.config
  return {
    context: cluster.context,
    namespace: cluster.namespace,
    cacheRoot: cluster['cache-root'],
    refreshInterval: cluster['refresh-interval'],
    readyTimeoutMs: cluster['ready-timeout-seconds'] * 1000,
    cacheTimeoutMs: cluster['cache-timeout-seconds'] * 1000,
  }
}
