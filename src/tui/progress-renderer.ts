import type {ProgressPort} from '../sdk/progress.js'

/**
 * How the command layer shows a long use case's progress (sdk/progress.ts): Ink on a terminal
 * (progress.tsx), one line per step off it, nothing with `--quiet` or `--json`. Ink and React
 * are imported only when a terminal shows progress: every other command starts without them.
 */
import {terminalSafe} from '../sdk/errors.js'

/** A port the command ends once the use case returned or threw, before it prints its result. */
export interface ProgressRenderer extends ProgressPort {
  /**
   * Draws the last frame (`✓` on every step, or `✗` on the current one when `failed`) and stops;
   * synchronous, so the command's result line comes after it. Safe to call more than once.
   */
  end(outcome: 'done' | 'failed'): void
  /**
   * Shows a warning above the frame while one is drawn, so a redraw cannot tear it; false when
   * no frame is drawn (the caller writes it itself).
   */
  note(text: string): boolean
}

/** Off a terminal: each step once, as a line (`cloning github.com/acme/app into the cache…`). */
export function lineProgress(write: (line: string) => void): ProgressRenderer {
  return {
    step: (name) => write(`${terminalSafe(name)}…\n`),
    update() {},
    done() {},
    end() {},
    note: () => false,
  }
}

/** `--quiet`, `--json`: nothing at all. */
export const silentProgress: ProgressRenderer = {step() {}, update() {}, done() {}, end() {}, note: () => false}

/** The renderer for a command: silent when asked, Ink on a terminal, lines otherwise. */
export function progressFor(stream: NodeJS.WriteStream, options: {silent: boolean}): ProgressRenderer {
  if (options.silent) return silentProgress
  return stream.isTTY ? deferredTerminal(stream) : lineProgress((line) => stream.write(line))
}

/**
 * Ink's renderer once its module has loaded: steps reported before are replayed then, updates
 * before are dropped (the next one comes soon); a command that ends first draws nothing.
 */
function deferredTerminal(stream: NodeJS.WriteStream): ProgressRenderer {
  let real: ProgressRenderer | undefined
  let ended = false
  const steps: string[] = []
  const use = (renderer: ProgressRenderer) => {
    if (ended) return
    real = renderer
    for (const name of steps.splice(0)) renderer.step(name)
  }

  // Without Ink (a broken install): lines, as off a terminal.
  import('./progress.js').then(
    (module) => use(module.terminalProgress(stream)),
    () => use(lineProgress((line) => stream.write(line))),
  )
  return {
    step: (name) => (real ? real.step(name) : void steps.push(name)),
    update: (update) => real?.update(update),
    // Before Ink has loaded, the steps so far are over: nothing of them is left to draw.
    done: () => (real ? real.done() : void steps.splice(0)),
    note: (text) => real?.note(text) ?? false,
    end(outcome) {
      ended = true
      real?.end(outcome)
    },
  }
}
