/**
 * What `yard up` would run for a target (DESIGN.md §4.2 "yard renders the stack"): the checkout's
 * compose project resolved as Compose would (compose/), isolated for the target (isolate.ts) and
 * rendered as one file; with the isolation report and the implicit host ports. Starts nothing.
 */
import {createHash} from 'node:crypto'

import type {StackPlan, StackReportEntry, StackSpec} from '../../sdk/stack.js'
import type {Target} from '../../sdk/target.js'
import type {ComposeModelDocument, ResolveInput, ResolveWarning} from './compose/types.js'

import {renderComposeFile} from './compose/render.js'
import {resolveComposeProject} from './compose/resolve.js'
import {mayBeKeyed, probePortValues} from './isolate-ports.js'
import {isolate} from './isolate.js'
import {CONFIG_LABEL} from './labels.js'

export interface RenderedStack extends StackPlan {
  /** The rendered file's text. */
  text: string
  /** Engine names of the project's own networks (the box joins them). */
  networks: string[]
  /** The services the rendered file runs. */
  services: string[]
  /** Each service's CONFIG_LABEL value. */
  configs: Record<string, string>
}

/** Puts CONFIG_LABEL on every service: 12 hex of the sha256 of its rendered definition. */
function labelConfigs(compose: ComposeModelDocument): Record<string, string> {
  const configs: Record<string, string> = {}
  for (const [name, service] of Object.entries(compose.services)) {
    configs[name] = createHash('sha256').update(JSON.stringify(service)).digest('hex').slice(0, 12)
    service.labels = {...service.labels, [CONFIG_LABEL]: configs[name]}
  }

  return configs
}

/** yard's own variables of the env of DESIGN.md §3.5: they win over any `.env` (the resolver's yardEnv). */
const YARD_NAMES = new Set(['MAIN_REPO', 'WORKTREE', 'YARD_CHECKOUT', 'COMPOSE_PROJECT_NAME', 'PODMAN_PROJECT'])

/**
 * The shell env and yard's variables of a target, WORKTREE unset for main (DESIGN.md §3.5). A
 * confined (untrusted) target gets yard's variables only: the host's environment never reaches it.
 */
export function splitEnv(
  target: Target,
  spec: StackSpec,
  shell: NodeJS.ProcessEnv,
): {env: Record<string, string | undefined>; yardEnv: Record<string, string | undefined>} {
  const env: Record<string, string | undefined> = spec.confine === undefined ? {...shell, ...spec.env} : {...spec.env}
  const yardEnv: Record<string, string | undefined> = {}
  for (const [key, value] of Object.entries(spec.env))
    if (YARD_NAMES.has(key) || key in target.ports || key.startsWith('YARD_')) yardEnv[key] = value
  if (target.isMain) {
    delete env.WORKTREE
    yardEnv.WORKTREE = undefined
  }

  return {env, yardEnv}
}

/**
 * The model resolved once more with the `[ports]` keys moved (isolate-ports.ts
 * `probePortValues`); undefined when no host port equals a key's value (nothing to tell apart),
 * or when that resolution fails (then a port equal to a key's value counts as the key's).
 */
async function keyProbe(
  input: ResolveInput,
  model: ComposeModelDocument,
  target: Target,
): Promise<ComposeModelDocument | undefined> {
  if (!mayBeKeyed(model, target)) return undefined
  const values = probePortValues(model, target)
  if (!values) return undefined
  const yardEnv = {
    ...input.yardEnv,
    ...Object.fromEntries(Object.entries(values).map(([key, port]) => [key, String(port)])),
  }
  try {
    return (await resolveComposeProject({...input, yardEnv}))?.model
  } catch {
    return undefined
  }
}

function fromWarning(warning: ResolveWarning): StackReportEntry {
  const action =
    warning.kind === 'yard-variable-in-env-file' && warning.file && warning.key
      ? `remove ${warning.key} from ${warning.file}: yard sets it for every checkout`
      : 'see the message; the stack runs as resolved'
  return {kind: 'warning', service: null, detail: warning.message, action}
}

/**
 * Resolves, isolates and renders the target's stack; undefined when the checkout has no compose
 * file. @throws InputError (exit 2) from the resolver (unreadable file, invalid YAML, a missing
 * required variable).
 */
export async function planStack(
  target: Target,
  spec: StackSpec,
  shell: NodeJS.ProcessEnv,
): Promise<RenderedStack | undefined> {
  const {env, yardEnv} = splitEnv(target, spec, shell)
  const input = {
    checkoutPath: target.checkoutPath,
    configuredFiles: spec.configuredFiles,
    configuredOrigin: spec.configuredOrigin,
    profiles: spec.profiles,
    env,
    yardEnv,
    confine: spec.confine,
  }
  const resolved = await resolveComposeProject(input)
  if (!resolved) return undefined
  // A host port equal to a [ports] value may be the key's or a literal of that value: resolving
  // once more with every key moved tells them apart (the port rule needs the file's literals exactly).
  const probe = await keyProbe(input, resolved.model, target)
  const isolated = isolate(
    resolved.model,
    target,
    {external: spec.external ?? 'refuse', allowShared: spec.allowShared ?? []},
    probe,
    resolved.builtImages,
  )
  const configs = labelConfigs(isolated.compose)
  const compose = isolated.compose as Record<string, unknown>
  return {
    configs,
    project: target.project,
    files: resolved.files,
    compose,
    report: [...resolved.warnings.map(fromWarning), ...isolated.report],
    ports: isolated.ports,
    text: renderedText(compose, target, resolved.files),
    networks: isolated.networks,
    services: Object.keys(isolated.compose.services),
  }
}

/**
 * The YAML text of a rendered model (compose/render.ts: YAML 1.1, `$` doubled), with a header
 * naming the files it comes from.
 */
export function renderedText(compose: Record<string, unknown>, target: Target, files: readonly string[]): string {
  const head = [
    `# Rendered by yard for ${target.project} (${target.isMain ? 'main' : `worktree ${target.name}, offset ${target.offset}`}); do not edit: yard up writes it again.`,
    `# From: ${files.join(', ')}`,
  ]
  return `${head.join('\n')}\n${renderComposeFile(compose as ComposeModelDocument)}`
}
