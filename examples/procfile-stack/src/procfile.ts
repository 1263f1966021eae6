/**
 * Procfile parsing: one `name: command` per line, as Heroku and foreman read it. Blank lines and
 * lines starting with `#` are skipped. A name is letters, digits, `_` and `-` (it becomes a file
 * name under yard's state directory); names are unique. The command is the rest of the line,
 * run later with `sh -c`: it is the user's own shell text, that is a Procfile's documented
 * meaning.
 */

/** One process type of a Procfile. */
export interface ProcfileService {
  name: string
  command: string
  /** 1-based line in the Procfile, for messages. */
  line: number
}

/** A line that is not `name: command`, or a repeated name. */
export interface ProcfileProblem {
  line: number
  message: string
}

const SERVICE_LINE = /^([A-Za-z0-9_-]+)[ \t]*:[ \t]*(.*)$/

/**
 * Parses Procfile text. Never throws: what is wrong is returned line by line, and a caller
 * refuses the whole file when anything is (nothing is started from a half-valid Procfile).
 */
export function parseProcfile(text: string): {services: ProcfileService[]; problems: ProcfileProblem[]} {
  const services: ProcfileService[] = []
  const problems: ProcfileProblem[] = []
  const seen = new Map<string, number>()
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = index + 1
    const trimmed = raw.trim()
    if (trimmed === '' || trimmed.startsWith('#')) return
    const match = SERVICE_LINE.exec(trimmed)
    if (!match) {
      problems.push({line, message: `"${trimmed}" is not "name: command" (a name is letters, digits, _ and -)`})
      return
    }
    const [, name, command] = match
    if (command.trim() === '') {
      problems.push({line, message: `process type "${name}" has no command`})
      return
    }
    const first = seen.get(name)
    if (first !== undefined) {
      problems.push({line, message: `process type "${name}" is already defined on line ${first}`})
      return
    }
    seen.set(name, line)
    services.push({name, command: command.trim(), line})
  })
  if (services.length === 0 && problems.length === 0) problems.push({line: 1, message: 'no process type is defined'})
  return {services, problems}
}

/**
 * The `[ports]` keys a command names as a word (`$APP_PORT`, `${APP_PORT}`,
 * `process.env.APP_PORT`), in `ports` order: the host ports the process will listen on, as far
 * as yard can know. Keys are environment variable names, so they need no escaping.
 */
export function portsNamed(command: string, ports: Record<string, number>): Array<{key: string; port: number}> {
  return Object.entries(ports)
    .filter(([key]) => new RegExp(`(?<![A-Za-z0-9_])${key}(?![A-Za-z0-9_])`).test(command))
    .map(([key, port]) => ({key, port}))
}
