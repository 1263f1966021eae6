/**
 * The port rule (DESIGN.md §4.2, docs/stacks.md "The port rule"): where a worktree publishes the
 * host ports its compose file fixes. Pure.
 *
 * L is the sorted set of every host port the file fixes (ranges expanded; every service,
 * protocol and bind address), n = |L|, and rank(p) the 0-based position of p in L. K is the
 * union of the `[ports]` ranges [base, base + 89] (where some checkout publishes each key). The
 * stride is S = 100·⌈n/100⌉ (100 for up to 100 ports). The window is [B, B + 90·S): B is the
 * first of 20000, 20100, …, then 2000, 2100, …, 19900, whose window stays below 65536 and holds
 * no port of L, no host port the engine may pick for the file (`8000-8010:80`) and no port of K.
 * The worktree at offset k (1..89) publishes p at B + (k − 1)·S + rank(p); main (offset 0)
 * publishes p, unless p is in K: then at B + 89·S + rank(p) (main's block, the 90th).
 *
 * Why the sets are disjoint: a checkout's moved ports lie in its own block (worktree k's is
 * [B + (k − 1)·S, B + k·S), main's the last) because rank(p) < n ≤ S; blocks of different
 * checkouts do not meet; every block lies in the window, which holds none of main's unmoved
 * ports (L) and no port of K, so none of any checkout's `[ports]` ports; main's unmoved ports are
 * outside K too. rank is injective, so one checkout never maps two ports onto one, and the ports
 * of a range a-b are consecutive in L, so the range moves as one block.
 */

/** An inclusive range of ports (a single port has start = end). */
export interface PortRange {
  start: number
  end: number
}

/** The highest worktree offset (DESIGN.md §3.4). */
export const MAX_OFFSET = 89
const FIRST_WINDOW = 20_000
const WINDOW_STEP = 100
const LOWEST_WINDOW = 2000

export interface PortRule {
  /** L: the fixed host ports, sorted, distinct. */
  literals: number[]
  /** S: the block size of one offset. */
  stride: number
  /** B: the window's first port; undefined when no window fits (too many ports for 90 blocks). */
  base: number | undefined
  /** K: the `[ports]` ranges; a port of L in one moves in main too. */
  keyed: PortRange[]
}

/** The blocks of the window: one per worktree offset, and main's (the last) for its ports in K. */
const BLOCKS = MAX_OFFSET + 1

const overlaps = (a: PortRange, b: PortRange) => a.start <= b.end && b.start <= a.end

/**
 * The rule for one file: `fixed` are the host ports and ranges it fixes, `avoid` the ranges the
 * window must not touch besides them (engine-picked host ranges), `keyed` the `[ports]` ranges
 * [base, base + 89] (the window avoids them too, and main moves its ports inside them).
 */
export function portRule(
  fixed: readonly PortRange[],
  avoid: readonly PortRange[],
  keyed: readonly PortRange[] = [],
): PortRule {
  const set = new Set<number>()
  for (const range of fixed) for (let port = range.start; port <= range.end; port++) set.add(port)
  const literals = [...set].sort((a, b) => a - b)
  const stride = Math.max(1, Math.ceil(literals.length / 100)) * 100
  const size = BLOCKS * stride
  const blocked = [...avoid, ...keyed, ...literals.map((port) => ({start: port, end: port}))]
  const candidates: number[] = []
  for (let start = FIRST_WINDOW; start + size <= 65_536; start += WINDOW_STEP) candidates.push(start)
  for (let start = LOWEST_WINDOW; start < FIRST_WINDOW && start + size <= 65_536; start += WINDOW_STEP)
    candidates.push(start)
  const base = candidates.find((start) => blocked.every((range) => !overlaps(range, {start, end: start + size - 1})))
  return {literals, stride, base, keyed: [...keyed]}
}

/**
 * Whether `range` (fixed by the file) moves at `offset`: always in a worktree; in main only
 * when a port of it is in a `[ports]` range, where some worktree publishes that key.
 */
export function moves(rule: PortRule, range: PortRange, offset: number): boolean {
  return offset !== 0 || rule.keyed.some((keyed) => overlaps(keyed, range))
}

/**
 * The host port that `port` (a member of the rule's L) becomes at `offset` (0 for main: main's
 * block; call it for main only when `moves` says so).
 * @throws Error for a port outside L or a rule without a window.
 */
export function movePort(rule: PortRule, port: number, offset: number): number {
  const rank = rank0(rule.literals, port)
  if (rank === -1) throw new Error(`port ${port} is not one the file fixes`)
  if (rule.base === undefined) throw new Error('no window for the port rule')
  return rule.base + (offset === 0 ? MAX_OFFSET : offset - 1) * rule.stride + rank
}

/** The range a fixed range becomes at `offset` (consecutive in L, so still a range); itself when it does not move. */
export function moveRange(rule: PortRule, range: PortRange, offset: number): PortRange {
  if (!moves(rule, range, offset)) return range
  return {start: movePort(rule, range.start, offset), end: movePort(rule, range.end, offset)}
}

function rank0(sorted: readonly number[], port: number): number {
  let low = 0
  let high = sorted.length - 1
  while (low <= high) {
    const middle = (low + high) >> 1
    if (sorted[middle] === port) return middle
    if (sorted[middle] < port) low = middle + 1
    else high = middle - 1
  }

  return -1
}
