/**
 * Claims of warm pool pods on the podman runtime (docs/sandboxes.md, "Warm pool"). podman cannot
 * rename a pod or change the labels of one that runs, so a claimed pool pod keeps its own name
 * and labels, and yard keeps the sandbox's identity beside it in the state directory:
 * `<state dir>/sandboxes/<project>.claim.json` holds the pod's name and the labels and
 * annotations a cold create would have given it. The runtime reads that record wherever it is
 * asked for the project (podman-runtime.ts), so every command sees the sandbox's own identity.
 *
 * `<state dir>/sandboxes/claimed/<pod>` is made with `O_EXCL` before anything else: two creates
 * racing for one ready pod cannot both have it.
 */
import {existsSync, promises as fs, readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'

/** What yard keeps of a claimed pool pod: the sandbox's identity. */
export interface ClaimRecord {
  /** The pool pod's own name (what podman knows). */
  pod: string
  /** The pool the pod came from. */
  pool: string
  /** The labels a cold create would have put on the pod (DESIGN.md §5.2). */
  labels: Record<string, string>
  annotations: Record<string, string>
}

const sandboxesDir = (stateDir: string) => path.join(stateDir, 'sandboxes')
const claimFile = (stateDir: string, project: string) => path.join(sandboxesDir(stateDir), `${project}.claim.json`)
const markerFile = (stateDir: string, pod: string) => path.join(sandboxesDir(stateDir), 'claimed', pod)

/**
 * The claim of project `project`, or undefined (a cold sandbox, or none). Synchronous: read on
 * every call into the pod.
 */
export function readClaim(stateDir: string, project: string): ClaimRecord | undefined {
  const file = claimFile(stateDir, project)
  if (!existsSync(file)) return undefined
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as ClaimRecord
  } catch {
    return undefined
  }
}

/** Every claim, by the pool pod's name. */
export function claimsByPod(stateDir: string): Map<string, {project: string; record: ClaimRecord}> {
  const found = new Map<string, {project: string; record: ClaimRecord}>()
  const entries = existsSync(sandboxesDir(stateDir)) ? readdirSync(sandboxesDir(stateDir)) : []
  for (const entry of entries.filter((name) => name.endsWith('.claim.json'))) {
    const project = entry.slice(0, -'.claim.json'.length)
    const record = readClaim(stateDir, project)
    if (record) found.set(record.pod, {project, record})
  }

  return found
}

/**
 * Takes pool pod `pod` for `project` (O_EXCL on its marker).
 * @returns false when another create took it first.
 */
export async function takePod(stateDir: string, pod: string, project: string): Promise<boolean> {
  await fs.mkdir(path.dirname(markerFile(stateDir, pod)), {recursive: true})
  try {
    await fs.writeFile(markerFile(stateDir, pod), `${project}\n`, {flag: 'wx'})
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
}

/** Whether pool pod `pod` was taken (claimed, or being claimed). */
export function isTaken(stateDir: string, pod: string): boolean {
  return existsSync(markerFile(stateDir, pod))
}

/** The project whose create took pool pod `pod` (its taken marker), or undefined when it is not taken. */
export function takenBy(stateDir: string, pod: string): string | undefined {
  try {
    return readFileSync(markerFile(stateDir, pod), 'utf8').trim() || undefined
  } catch {
    return undefined
  }
}

/** Writes the claim record (atomically: a reader sees the whole record or none). */
export async function writeClaim(stateDir: string, project: string, record: ClaimRecord): Promise<void> {
  const file = claimFile(stateDir, project)
  await fs.writeFile(`${file}.tmp`, JSON.stringify(record) + '\n')
  await fs.rename(`${file}.tmp`, file)
}

/** Forgets the claim of `project` and the marker of its pod (nothing when there is none). */
export async function dropClaim(stateDir: string, project: string, pod: string): Promise<void> {
  await fs.rm(claimFile(stateDir, project), {force: true})
  await fs.rm(markerFile(stateDir, pod), {force: true})
}
