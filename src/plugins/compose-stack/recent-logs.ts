import type {ProcessRunner} from '../../sdk/process.js'
/**
 * Recent log lines of a project for the dashboard's detail pane (DESIGN.md §6): the engine's
 * `logs --tail N --timestamps` of each container, captured (never on the terminal), merged in
 * time order, each line led by its service name. Bounded in lines and in time.
 */
import type {StackContainer} from '../../sdk/stack.js'

/** How long one container's logs may take before it is left out, in milliseconds. */
const LOGS_BUDGET_MS = 3000

/** `2026-11-29T11:13:08.123456789Z text` (podman, docker `--timestamps`): the time and the text. */
function splitStamp(line: string): {time: number; text: string} {
  const space = line.indexOf(' ')
  const time = space > 0 ? Date.parse(line.slice(0, space)) : NaN
  return Number.isNaN(time) ? {time: 0, text: line} : {time, text: line.slice(space + 1)}
}

/**
 * The last `lines` lines of all `containers` together, oldest first, as `service | text`. A
 * container whose logs fail or take longer than 3 s is left out (its line says so).
 * @param engine `podman` or `docker` (both take `logs --tail N --timestamps NAME`, docker-logs(1)).
 */
export async function recentLogLines(
  runner: ProcessRunner,
  engine: string,
  containers: StackContainer[],
  lines: number,
): Promise<string[]> {
  const perContainer = await Promise.all(
    containers.map(async (container) => {
      const result = await runner.run(engine, ['logs', '--tail', String(lines), '--timestamps', container.container], {
        allowFailure: true,
        timeoutMs: LOGS_BUDGET_MS,
      })
      const label = container.service || container.container
      if (result.exitCode !== 0)
        return [
          {
            time: Number.MAX_SAFE_INTEGER,
            text: `${label} | (no logs: ${result.timedOut ? 'the engine took longer than 3 s' : result.stderr.trim().split('\n', 1)[0] || `exit ${result.exitCode}`})`,
          },
        ]
      return `${result.stdout}\n${result.stderr}`
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => {
          const {time, text} = splitStamp(line)
          return {time, text: `${label} | ${text}`}
        })
    }),
  )
  // A stable sort: lines of one container with the same time keep their order.
  return perContainer
    .flat()
    .sort((a, b) => a.time - b.time)
    .slice(-lines)
    .map((line) => line.text)
}
