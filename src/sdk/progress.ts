/**
 * The progress port of long use cases (cache add and fetch, image build, sandbox create and rm,
 * worktree add): core names its steps and hands on what the tools report; the command layer
 * renders it (a spinner and a bar on a terminal, one line per step off it, nothing with
 * `--quiet`). Core stays print-free: without a port, nothing is reported.
 */

/** How far a step is, as the tool said: `done` of `total` `unit`s, and bytes and rate when known. */
export interface ProgressUpdate {
  /** What the tool is doing within the step: git's phase (`Receiving objects`). */
  phase?: string
  done: number
  /** Undefined when the tool does not know yet (`Enumerating objects: 3002`). */
  total?: number
  /** What `done` counts: `objects`, `deltas`, `files`, `packages`. */
  unit: string
  /** Transferred so far, as git prints it (`1.20 MiB`). */
  bytes?: string
  /** Transfer rate, as git prints it (`2.40 MiB/s`). */
  rate?: string
}

/** What a use case reports to; every method is optional to call and never throws. */
export interface ProgressPort {
  /** Starts step `name` (`cloning cache github.com/acme/app`); the step before it ends. */
  step(name: string): void
  /** Where the current step is. */
  update(update: ProgressUpdate): void
  /**
   * The current step ended and the operation that reported it is over: what follows (the
   * caller's own checks) is no part of it, so a later failure is not shown as this step's.
   */
  done(): void
}

/**
 * One progress line of git (`progress.c` `display()`): `PHASE: NN% (DONE/TOTAL)[, BYTES[ | RATE]]`
 * or, before the total is known, `PHASE: DONE`; `remote: ` before the server's own phases.
 */
const GIT_PROGRESS =
  /^(?:remote: )?([A-Z][A-Za-z ]*?):\s+(?:(\d+)% \((\d+)\/(\d+)\)|(\d+))(?:, ([\d.]+ [KMGT]?i?B))?(?: \| ([\d.]+ [KMGT]?i?B\/s))?/

/** git's phase names, and what their counts count. */
const UNITS: Array<[RegExp, string]> = [
  [/delta/i, 'deltas'],
  [/files/i, 'files'],
]

/**
 * Parses one line of git's `--progress` output (without its `\r` or `\n`) into an update, or
 * undefined for anything else (errors, hints). Source: git's progress.c and
 * git-clone(1)/git-fetch(1) `--progress`.
 */
export function parseGitProgress(line: string): ProgressUpdate | undefined {
  const match = GIT_PROGRESS.exec(line.trim())
  if (!match) return undefined
  const [, phase, , done, total, count, bytes, rate] = match
  const unit = UNITS.find(([pattern]) => pattern.test(phase))?.[1] ?? 'objects'
  return {
    phase,
    done: Number(done ?? count),
    ...(!(total === undefined) && {total: Number(total)}),
    unit,
    ...(bytes && {bytes}),
    ...(rate && {rate}),
  }
}

/**
 * A stderr listener for a git run with `--progress`: splits what comes into lines at `\r` and
 * `\n` (git redraws a line with `\r`), keeping a partial line for the next chunk, and hands
 * every progress line to `port`.
 */
export function gitProgressListener(port: ProgressPort): (chunk: string) => void {
  let partial = ''
  return (chunk) => {
    const parts = (partial + chunk).split(/[\r\n]/)
    partial = parts.pop() ?? ''
    for (const part of parts) {
      const update = parseGitProgress(part)
      if (update) port.update(update)
    }
  }
}

/**
 * `text` without git's progress lines (every redraw between `\r`s), for the stderr of a run
 * whose progress was read: an error then carries git's words, not every redraw.
 */
export function withoutProgress(text: string): string {
  return text
    .split(/(?<=\n)/)
    .map((line) =>
      line
        .split('\r')
        .filter((part) => parseGitProgress(part) === undefined)
        .join(''),
    )
    .filter((line) => line.trim() !== '')
    .join('')
}
