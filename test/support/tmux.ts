/**
 * A tmux pane of a fixed size on its own server, for tests that need a real terminal (TTY size,
 * resize, Ctrl-C): `yard exec`, `sandbox forward`. The server's socket is named by the caller,
 * under the test file's prefix, so a crashed run's server is found by name.
 */
import {execFileSync, spawnSync} from 'node:child_process'

export interface TmuxPane {
  /** `tmux send-keys` to the pane: words as tmux reads them (`Enter`, `C-c`, text). */
  send(...keys: string[]): void
  /** What the pane shows now (`capture-pane -p`). */
  screen(): string
  /**
   * Polls the screen every 200 ms until `pattern` matches or `budgetMs` passes; resolves with the
   * last screen either way, so the caller's expectation shows what the pane held.
   */
  waitFor(pattern: RegExp, budgetMs?: number): Promise<string>
  /** Runs any other tmux command against this pane's server. */
  tmux(...args: string[]): string
  /** Kills the server (never throws). */
  kill(): void
}

/** Starts a detached session `t` of `width`×`height` running `command` (a shell line) on server `socket`. */
export function openPane(socket: string, options: {width: number; height: number; command: string}): TmuxPane {
  const tmux = (...args: string[]) =>
    execFileSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], {encoding: 'utf8'})
  tmux('new-session', '-d', '-s', 't', '-x', String(options.width), '-y', String(options.height), options.command)
  const screen = () => tmux('capture-pane', '-p', '-t', 't')
  return {
    send: (...keys) => void tmux('send-keys', '-t', 't', ...keys),
    screen,
    async waitFor(pattern, budgetMs = 60_000) {
      const deadline = Date.now() + budgetMs
      let text = screen()
      while (!pattern.test(text) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200))
        text = screen()
      }

      return text
    },
    tmux,
    kill: () => void spawnSync('tmux', ['-L', socket, 'kill-server']),
  }
}
