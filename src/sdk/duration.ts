/**
 * Durations given by users: a cache agent's `--interval`, a Repo's `refreshInterval` (`yard
 * cluster repo add --refresh`, `[cluster] refresh-interval`). Each is a timer's delay, and Node
 * runs a timer of more than 2^31-1 ms (~24.8 days) after 1 ms instead: an unbounded interval
 * would turn an agent's idle wait into a busy loop. So every one is at most `MAX_INTERVAL_MS`.
 */
import {InputError} from './errors.js'

/** The longest interval yard accepts: 7 days, in milliseconds. */
export const MAX_INTERVAL_MS = 7 * 24 * 3_600_000

const REFRESH = /^(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?$/

/**
 * Milliseconds of a `refreshInterval` such as `90s`, `10m`, `1h30m` (hours, minutes, seconds,
 * in that order, each optional, at least one), between 1 s and `MAX_INTERVAL_MS`.
 * @throws InputError (exit 2) for anything else, zero or more than 7 days; `what` names the
 *   setting in the message (`--refresh`, `refresh interval`).
 */
export function parseRefreshInterval(text: string, what = 'refresh interval'): number {
  const match = REFRESH.exec(text)
  if (text === '' || match === null) {
    throw new InputError(`invalid ${what} ${JSON.stringify(text)}`, {
      why: 'a refresh interval is hours, minutes and seconds such as 90s, 10m or 1h30m',
      fix: 'use a value like 10m',
    })
  }

  const [hours, minutes, seconds] = [match[1], match[2], match[3]].map((part) => Number(part ?? 0))
  const ms = ((hours * 60 + minutes) * 60 + seconds) * 1000
  if (ms === 0)
    throw new InputError(`invalid ${what} ${JSON.stringify(text)}: it is zero`, {fix: 'use a value like 10m'})
  if (ms > MAX_INTERVAL_MS)
    throw new InputError(`invalid ${what} ${JSON.stringify(text)}: it is more than 7 days`, {
      why: 'yard refreshes at least once a week',
      fix: 'use a value of at most 168h',
    })
  return ms
}
