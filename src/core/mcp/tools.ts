import type {YardTool} from './tool.js'

/** Every tool of `yard mcp`, in the order `tools/list` gives them (docs/agents.md). */
import {exec} from './exec-tool.js'
import {sandboxAttach, sandboxCreate, sandboxList, sandboxRm} from './sandbox-tools.js'
import {boxDownTool, boxUpTool, down, env, logs, ports, ps, up} from './stack-tools.js'
import {cacheList, doctor} from './system-tools.js'
import {worktreeAdd, worktreeList, worktreeRemove} from './worktree-tools.js'

export const TOOLS: readonly YardTool[] = [
  worktreeAdd,
  worktreeList,
  worktreeRemove,
  up,
  down,
  ps,
  logs,
  ports,
  env,
  boxUpTool,
  boxDownTool,
  exec,
  sandboxCreate,
  sandboxList,
  sandboxAttach,
  sandboxRm,
  cacheList,
  doctor,
]

/** The tools `yard mcp --read-only` offers: those that change nothing. */
export function toolsFor(options: {readOnly: boolean}): YardTool[] {
  return TOOLS.filter((tool) => tool.readOnly || !options.readOnly)
}
