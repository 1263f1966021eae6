/**
 * How a stale cache is told (DESIGN.md §5.1, "a fetch that fails on a present cache is a
 * warning: callers proceed on the cached objects and are told it is stale and since when"): the
 * key, the instant of its last successful fetch with its age, and the last line of git's words.
 * Shared by both sandbox runtimes, so create and attach say it the same way.
 */

/** A coarse age: `45s`, `12m`, `3h`, `2d` (never negative). */
export function ageText(sinceIso: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.floor((now - Date.parse(sinceIso)) / 1000))
  if (seconds < 60) return `${seconds}s`
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h`
  return `${Math.floor(seconds / 86_400)}d`
}

/**
 * `the cache app-1a2b3c4d is stale since 2026-12-01T10:00:00Z (12m ago): fatal: …`; `since` null
 * (never fetched since it was made) says so.
 */
export function staleNote(key: string, since: string | null, error: string | null, now = Date.now()): string {
  const when =
    since === null || Number.isNaN(Date.parse(since))
      ? 'stale, never fetched since it was made'
      : `stale since ${since} (${ageText(since, now)} ago)`
  const why = error?.trim().split('\n').filter(Boolean).at(-1) ?? 'its fetch failed'
  return `the cache ${key} is ${when}: ${why}`
}
