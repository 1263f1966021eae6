/**
 * Sizes and ages for people, in listing tables (`--json` keeps the exact numbers and stamps).
 */

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'] as const

/**
 * `512 B`, `26 KiB`, `1.5 MiB`: IEC units (powers of 1024), one decimal below 10 of a unit,
 * none from 10 on.
 */
export function formatBytes(bytes: number): string {
  let value = Math.max(0, bytes)
  let unit = 0
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024
    unit++
  }

  if (unit === 0) return `${Math.round(value)} B`
  const shown = value < 10 ? Math.round(value * 10) / 10 : Math.round(value)
  // 9.96 KiB rounds to 10.0: print 10.
  return `${Number.isInteger(shown) ? shown.toFixed(0) : shown.toFixed(1)} ${BYTE_UNITS[unit]}`
}

/** `37s`, `5m`, `3h`, `2d`: the largest whole unit of an elapsed time in milliseconds (negative: `0s`). */
export function formatAge(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000))
  if (seconds < 60) return `${seconds}s`
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h`
  return `${Math.floor(seconds / 86_400)}d`
}
