/**
 * `yard init` in a repository with a compose file (DESIGN.md §4.1, §4.2): the commented
 * `[ports]` examples come from the file's own port variables (`"${WEB_PORT:-8080}:80"` →
 * `# WEB_PORT = 8080`). Nothing is needed for the file to run in every checkout (yard moves
 * literal ports itself), so they stay commented; uncommented they are a valid `[ports]` table.
 */
import {readFileSync} from 'node:fs'
import path from 'node:path'

import {OFFSET_SLOTS} from '../identity/identity.js'
import {DEFAULT_COMPOSE_FILES} from '../stack/compose-files.js'
import {MAX_PORT_BASE, RESERVED_PORT_KEYS} from './config-keys.js'

export interface PortExample {
  key: string
  base: number
}

/**
 * A variable with a numeric default used as a host port: `${KEY:-1234}:` / `${KEY-1234}:` in the
 * short syntax, `published: "${KEY:-1234}"` in the long one.
 */
const HOST_PORT_VARIABLE = /(?:published:\s*["']?)?\$\{([A-Za-z_][A-Za-z0-9_]*):?-(\d{1,5})\}(:?)/gm

/**
 * The port variables of the checkout's first default compose file, in file order; a key that
 * yard reserves, a base out of range, or one whose range [base, base + 89] meets an earlier
 * one's (the config check would refuse it) is left out. None when there is no compose file.
 */
export function composePortExamples(checkoutPath: string): PortExample[] {
  const file = DEFAULT_COMPOSE_FILES.map((name) => path.join(checkoutPath, name)).find((candidate) => {
    try {
      readFileSync(candidate)
      return true
    } catch {
      return false
    }
  })
  if (!file) return []
  const examples: PortExample[] = []
  for (const match of readFileSync(file, 'utf8').matchAll(HOST_PORT_VARIABLE)) {
    const [key, base] = [match[1], Number(match[2])]
    if (!match[0].startsWith('published') && match[3] !== ':') continue
    if (examples.some((example) => example.key === key) || RESERVED_PORT_KEYS.includes(key) || key.startsWith('YARD_'))
      continue
    if (base < 1 || base > MAX_PORT_BASE) continue
    if (examples.some((example) => Math.abs(example.base - base) <= OFFSET_SLOTS)) continue
    examples.push({key, base})
  }

  return examples
}
