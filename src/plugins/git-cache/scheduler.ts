/**
 * The scheduler both cache agents run (DESIGN.md §5.1, git-cache-notes §2): a pass plans the work
 * due now (`plan`), starts it in that order while fewer than `AGENT_CONCURRENCY` caches are being
 * worked on (`perform`), then waits for the first of a piece of work ending, the agent's own
 * wake-up (`idle`), or a stop. Each key is worked on at most once at a time, and at most once in
 * all with `once`. A plan asks `busy(key)` right before it reads that key's record: no work
 * starts while it plans, so a key not busy then is read after its latest work ended, never
 * half-way. When a key's work ends it falls due again on its interval ±20 % (`nextDue`). What is
 * due, and what the work is, is the agent's.
 */
import type {CacheAgentEvent, CacheAgentOptions, CacheAgentPass} from '../../sdk/cache.js'

/** Caches worked on at once, at most (git-cache-notes §2.1). */
export const AGENT_CONCURRENCY = 4

/** What a plan sees of the scheduler: the keys it must leave out, those in flight, when each falls due again. */
export interface Pass {
  /** True for a key not to plan now: in flight, or attempted already (with `once`). */
  busy(key: string): boolean
  readonly inFlight: ReadonlyMap<string, Promise<void>>
  /** The jittered instant (epoch ms) a key falls due again, set when the scheduler's work on it ended. */
  readonly nextDue: Map<string, number>
}

/** One agent's side of the schedule, over its own kind of work item. */
export interface Agenda<T> {
  key(item: T): string
  /** The interval a key's next due instant is drawn around (ms). */
  intervalMs(item: T): number
  /** The work due now, most urgent first; may throw (then the scheduler waits for the work in flight and rethrows). */
  plan(pass: Pass): Promise<T[]>
  /** Does one item's work; never throws. */
  perform(item: T): Promise<void>
  /** Resolves when the next pass should run if no work ends sooner; undefined runs it at once. */
  idle(): Promise<unknown> | undefined
}

/**
 * Runs `agenda` until `signal` aborts (work in flight is awaited), or with `once` until nothing is
 * due or in flight.
 */
export async function runSchedule<T>(
  agenda: Agenda<T>,
  options: {once?: boolean; signal?: AbortSignal},
): Promise<void> {
  const nextDue = new Map<string, number>()
  const inFlight = new Map<string, Promise<void>>()
  const attempted = new Set<string>()
  const busy = (key: string) => inFlight.has(key) || (Boolean(options.once) && attempted.has(key))
  for (;;) {
    let due: T[]
    try {
      due = await agenda.plan({busy, inFlight, nextDue})
    } catch (error) {
      await Promise.allSettled(inFlight.values())
      throw error
    }

    for (const item of due) {
      if (inFlight.size >= AGENT_CONCURRENCY) break
      const key = agenda.key(item)
      attempted.add(key)
      const work = agenda.perform(item).finally(() => {
        nextDue.set(key, Date.now() + jitteredInterval(agenda.intervalMs(item)))
        inFlight.delete(key)
      })
      inFlight.set(key, work)
    }

    if (options.once && inFlight.size === 0 && due.length === 0) break
    if (options.signal?.aborted) {
      await Promise.all(inFlight.values())
      break
    }

    const idle = agenda.idle()
    // Wake on the first of: a piece of work ending (a slot frees), the agent's wake-up, a stop
    // (idle's sleep ends on it).
    if (idle !== undefined) await Promise.race([...inFlight.values(), idle])
  }
}

/** The totals of an agent's run and the `emit` that adds each event to them and passes it on to `onEvent`. */
export function tally<P extends CacheAgentPass>(
  totals: P,
  options: CacheAgentOptions,
): {totals: P; emit: (event: CacheAgentEvent) => void} {
  const emit = (event: CacheAgentEvent) => {
    if (event.action !== 'skipped') totals[event.action]?.push(event.key)
    options.onEvent?.(event)
  }

  return {totals, emit}
}

/** A wait drawn from `intervalMs` ±20 % (`random` in [0, 1)). */
export function jitteredInterval(intervalMs: number, random: () => number = Math.random): number {
  return Math.round(intervalMs * (0.8 + 0.4 * random()))
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }

    signal?.addEventListener('abort', done, {once: true})
  })
}
