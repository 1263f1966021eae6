/**
 * The isolation rewrites of the rendered file (DESIGN.md §4.2, docs/stacks.md): yard's labels on
 * every service, volume and network (main too), and for a worktree only — main runs its literal
 * values — ports by the port rule, `container_name: X` → `<project>-X` (and references to it,
 * isolate-references.ts), fixed `name:`s of volumes
 * and networks → per project, `image:` + `build:` → the project's own tag, and `external:`
 * resources by `[stack] external`. What cannot be isolated is a refusal or a "shared" entry of the
 * report (isolate-shared.ts). The user's files are never touched: this works on a copy.
 */
import {createHash} from 'node:crypto'

import type {ImplicitPort} from '../../sdk/stack.js'
import type {Target} from '../../sdk/target.js'

import {
  type ComposeModelDocument,
  type ComposeServiceDocument,
  deepClone,
  isMapping,
  type Mapping,
} from './compose/types.js'
import {rewritePorts} from './isolate-ports.js'
import {rewriteContainerReferences, worktreeContainerName} from './isolate-references.js'
import {sharedResources} from './isolate-shared.js'
import {allowSharedActions, type ReportEntry} from './isolation-report.js'
import {CHECKOUT_LABEL, yardLabels} from './labels.js'

/** `[stack] external`: what a worktree does with `external: true` volumes and networks. */
export type ExternalPolicy = 'refuse' | 'per-checkout' | 'shared'

export interface IsolationSettings {
  external: ExternalPolicy
  /**
   * `[stack] allow-shared`: services that may keep `network_mode: host` (or `container:` of a
   * container outside the project) in a worktree.
   */
  allowShared: readonly string[]
}

export interface Isolated {
  /** The rendered model (a copy; `model` is not changed). */
  compose: ComposeModelDocument
  report: ReportEntry[]
  ports: ImplicitPort[]
  /** Engine names of the project's own (non-external) networks: the box joins them. */
  networks: string[]
}

/** Labels as a mapping (the specification allows a list of `key=value` too). */
function labelMap(labels: unknown): Record<string, string> {
  if (Array.isArray(labels))
    return Object.fromEntries(
      labels
        .map(String)
        .map((item) => [item.split('=', 1)[0], item.includes('=') ? item.slice(item.indexOf('=') + 1) : '']),
    )
  return isMapping(labels)
    ? Object.fromEntries(Object.entries(labels).map(([key, value]) => [key, value === null ? '' : String(value)]))
    : {}
}

/** The tag grammar of distribution/reference (src/core/machine/image-reference.ts): `[\w][\w.-]{0,127}`. */
const TAG_MAX = 128
/** Characters of a tag after the first. */
const TAG_REST = /[^\w.-]+/g

/**
 * `repo[:tag]` → `repo:<tag or latest>-<project>`, always a valid tag: characters a tag cannot
 * hold become `-`, a leading `.` or `-` goes (an empty tag is `latest`), and a tag over 128
 * characters is cut to 115 plus `-` and 12 hex of the sha256 of the whole, so two long ones
 * stay apart. Digests are left alone (undefined). The repository is kept as written.
 */
export function projectImageTag(image: string, project: string): string | undefined {
  if (image.includes('@')) return undefined
  const slash = image.lastIndexOf('/')
  const colon = image.lastIndexOf(':')
  const [repo, tag] = colon > slash ? [image.slice(0, colon), image.slice(colon + 1)] : [image, 'latest']
  const full = `${tag.replace(/^[^\w]+/, '') || 'latest'}-${project}`.replaceAll(TAG_REST, '-')
  if (full.length <= TAG_MAX) return `${repo}:${full}`
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 12)
  return `${repo}:${full.slice(0, TAG_MAX - hash.length - 1)}-${hash}`
}

/** The networks a service joins, by key; none with `network_mode`. */
function serviceNetworks(service: ComposeServiceDocument): string[] {
  if (service.network_mode !== undefined) return []
  if (Array.isArray(service.networks)) return service.networks.map(String)
  if (isMapping(service.networks)) return Object.keys(service.networks)
  return ['default']
}

/**
 * The rendered model of `target` and its report.
 * @param model the resolved model (resolver.ts); not changed
 * @param probe the model resolved with the `[ports]` keys shifted, which tells a port from a key
 *   from a literal of the same value (isolate-ports.ts `mayBeKeyed`); not changed
 * @param builtImages the images the project builds, profiles left out included (ResolvedProject);
 *   without it, those the model's own services build
 */
export function isolate(
  model: ComposeModelDocument,
  target: Target,
  settings: IsolationSettings,
  probe?: ComposeModelDocument,
  builtImages?: readonly string[],
): Isolated {
  const compose: ComposeModelDocument = {...deepClone(model), name: target.project}
  compose.services ??= {}
  const labels = yardLabels(target)
  const {ports, report} = rewritePorts(compose, target, probe)
  const worktree = !target.isMain
  if (worktree) report.push(...rewriteContainerReferences(compose, target, settings))
  const used = new Set<string>()
  // The images the project builds (`builtImages`, from the resolver: those of services a profile
  // left out included; else the services here that build) and their worktree tags: a service that
  // runs the image another one builds (`image: app:dev` without `build:`) runs the worktree's
  // build too.
  const builds =
    builtImages ??
    Object.values(compose.services).flatMap((service) =>
      typeof service.image === 'string' && service.build !== undefined ? [service.image] : [],
    )
  const built = new Map<string, string>()
  for (const image of worktree ? builds : []) {
    const tag = projectImageTag(image, target.project)
    if (tag) built.set(image, tag)
  }

  for (const [name, service] of Object.entries(compose.services)) {
    service.labels = {...labelMap(service.labels), ...labels, [CHECKOUT_LABEL]: target.checkoutPath}
    // Profiles are applied by the resolver; a provider given the rendered file must not apply them again.
    delete service.profiles
    for (const network of serviceNetworks(service)) used.add(network)
    if (service.network_mode === undefined && service.networks === undefined) service.networks = ['default']
    // podman-compose 1.0.3 reads a mapping of networks as `key=value` strings: a list when nothing else is said.
    if (
      isMapping(service.networks) &&
      Object.values(service.networks).every(
        (value) => value === null || (isMapping(value) && Object.keys(value).length === 0),
      )
    )
      service.networks = Object.keys(service.networks)
    if (!worktree) continue
    const container = service.container_name
    if (typeof container === 'string' && worktreeContainerName(container, target.project) !== container) {
      const renamed = worktreeContainerName(container, target.project)
      report.push({
        kind: 'rewrite',
        service: name,
        detail: `container_name ${container}`,
        action: `named ${renamed} in this worktree; other containers reach it by its service name ${name} (${container} is main's)`,
      })
      service.container_name = renamed
    }

    const tag = typeof service.image === 'string' ? built.get(service.image) : undefined
    if (tag) {
      report.push({
        kind: 'rewrite',
        service: name,
        detail:
          service.build === undefined
            ? `image ${service.image} built by this project`
            : `image ${service.image} built from build:`,
        action: `${service.build === undefined ? 'runs' : 'built and run as'} ${tag}, so this worktree never runs main's build`,
      })
      service.image = tag
    }
  }

  const networks: string[] = []
  for (const [section, resources] of [
    ['volumes', compose.volumes],
    ['networks', compose.networks],
  ] as const) {
    if (!resources) continue
    for (const [key, body] of Object.entries(resources)) {
      if (section === 'networks' && !used.has(key)) {
        // podman-compose 1.0.3 refuses declared networks no service joins; compose creates none for them.
        delete resources[key]
        continue
      }

      const resource: Mapping = isMapping(body) ? body : {}
      resources[key] = resource
      const external = resource.external !== undefined && resource.external !== false
      if (external) {
        if (!worktree) continue
        const fixedName =
          typeof resource.name === 'string'
            ? resource.name
            : isMapping(resource.external) && typeof resource.external.name === 'string'
              ? resource.external.name
              : key
        const what = `${section}.${key}`
        if (settings.external === 'shared') {
          report.push({
            kind: 'shared',
            service: what,
            detail: `external ${section === 'volumes' ? 'volume' : 'network'} ${fixedName}`,
            action: 'used as it is by every checkout ([stack] external = "shared")',
          })
          continue
        }

        if (settings.external === 'refuse') {
          report.push({
            kind: 'refused',
            service: what,
            detail: `external ${section === 'volumes' ? 'volume' : 'network'} ${fixedName} has a fixed name, so every checkout would use the same one`,
            action:
              'set [stack] external = "per-checkout" (yard creates an empty one per worktree) or "shared" (every checkout uses this one) in yard.toml',
          })
          continue
        }

        delete resource.external
        resource.name = `${target.project}_${key}`
        report.push({
          kind: 'rewrite',
          service: what,
          detail: `external ${section === 'volumes' ? 'volume' : 'network'} ${fixedName}`,
          action: `yard creates ${resource.name} for this worktree, empty, and owns it (nuke removes it) ([stack] external = "per-checkout")`,
        })
      } else if (worktree && typeof resource.name === 'string' && !resource.name.includes(target.project)) {
        const renamed = `${target.project}_${resource.name}`
        report.push({
          kind: 'rewrite',
          service: `${section}.${key}`,
          detail: `name ${resource.name}`,
          action: `named ${renamed} in this worktree`,
        })
        resource.name = renamed
      }

      resource.labels = {...labelMap(resource.labels), ...labels}
      if (section === 'networks')
        networks.push(typeof resource.name === 'string' ? resource.name : `${target.project}_${key}`)
    }
  }

  if (used.has('default') && !compose.networks?.default) {
    compose.networks = {...compose.networks, default: {labels: {...labels}}}
    networks.push(`${target.project}_default`)
  }

  if (worktree) report.push(...sharedResources(compose, target, settings))
  allowSharedActions(report, settings.allowShared)
  return {compose, report, ports, networks}
}
