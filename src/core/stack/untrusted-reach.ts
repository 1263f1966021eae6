/**
 * What an untrusted worktree's compose project would reach beyond its worktree (docs/worktrees.md,
 * "Untrusted worktrees"). On any machine, yard itself reads `env_file`s on the host while
 * rendering, so one outside the worktree would carry a host file's lines into a container. On a
 * machine without a VM (`native`), the engine is the host's: binds, volumes with driver options,
 * build contexts and build files outside the worktree, the host engine's secrets and configs, log
 * files, init binaries, and the host namespaces, devices and privileges a service can ask for all
 * reach the host itself. Each is a refusal before anything starts.
 */
import {existsSync, realpathSync} from 'node:fs'
import path from 'node:path'

import {writtenServices} from './compose-files.js'

type Mapping = Record<string, unknown>
const isMapping = (value: unknown): value is Mapping =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
const list = (value: unknown): unknown[] =>
  Array.isArray(value) ? value : value === undefined || value === null ? [] : [value]

/** The real path of `file`, through its closest existing parent when it does not exist yet. */
export function realPath(file: string): string {
  try {
    return realpathSync(file)
  } catch {
    const parent = path.dirname(file)
    return parent === file ? file : path.join(realPath(parent), path.basename(file))
  }
}

/** True when `file`'s real path lies inside `root` (a real path). */
function insideReal(file: string, root: string): boolean {
  const relative = path.relative(root, realPath(file))
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))
}

/**
 * `env_file` entries of the compose files (as written, before yard renders them) whose file lies
 * outside `worktree`: each as "service S reads env_file P". Relative paths resolve against the
 * first file's directory; files yard cannot read or parse are the stack backend's to report.
 */
export async function envFilesOutside(files: string[], worktree: string): Promise<string[]> {
  const root = realPath(worktree)
  const projectDir = path.dirname(files[0] ?? worktree)
  const found: string[] = []
  for (const {service, body} of await writtenServices(files)) {
    for (const entry of list(body.env_file)) {
      const written =
        typeof entry === 'string' ? entry : isMapping(entry) && typeof entry.path === 'string' ? entry.path : undefined
      if (written === undefined || written.includes('$')) continue
      const source = path.resolve(projectDir, written)
      if (!insideReal(source, root)) found.push(`service ${service} reads env_file ${source}`)
    }
  }

  return found
}

/** Service keys that join a host (or another container's) namespace when set so. */
const NAMESPACES = ['network_mode', 'pid', 'ipc', 'uts', 'userns_mode', 'cgroup']
/**
 * A namespace setting that keeps the container in a namespace of its own (or another service's
 * of the same project): `bridge`/`none`/`private`/`default`, a named network mode, `service:X`.
 * Everything else — `host`, `container:X`, `ns:/proc/…`, a path — joins one outside the project.
 */
function privateNamespace(key: string, value: unknown): boolean {
  if (typeof value !== 'string') return false
  if (/^(host|container:|ns:)|\//.test(value)) return false
  if (key === 'network_mode') {
    // slirp4netns's allow_host_loopback (podman-run(1), --network) lets the container reach the
    // host's 127.0.0.1 as 10.0.2.2; pasta's options map host ports in (-T, --map-host-loopback).
    const slirp = /^slirp4netns(?::([^/]*))?$/.exec(value)
    if (slirp)
      return (slirp[1] ?? '')
        .split(',')
        .every((option) => !/^allow_host_loopback(=|$)/.test(option) || option === 'allow_host_loopback=false')
    return /^(bridge|none|default|private|pasta|service:[a-zA-Z0-9][a-zA-Z0-9_.-]*)$/.test(value)
  }

  if (key === 'userns_mode') return /^(auto(:[^/]*)?|keep-id(:[^/]*)?|nomap|private)$/.test(value)
  return /^(private|shareable|none|service:[a-zA-Z0-9][a-zA-Z0-9_.-]*)?$/.test(value)
}

/** The build files a provider looks for in a build context without `dockerfile` (podman-compose, podman build). */
const DEFAULT_BUILD_FILES = ['Containerfile', 'containerfile', 'Dockerfile', 'dockerfile']

/** Service keys that grant the host's devices or privileges whenever they are set. */
const GRANTS = ['cap_add', 'devices', 'device_cgroup_rules', 'security_opt']

/**
 * What in a rendered compose file (absolute paths, DESIGN.md §4.2) reaches the host beyond
 * `worktree`, for a machine without a VM: one line per finding, empty when nothing does.
 */
export function hostReach(compose: Mapping, worktree: string): string[] {
  const root = realPath(worktree)
  const found: string[] = []
  const services = isMapping(compose.services) ? compose.services : {}
  for (const [service, raw] of Object.entries(services)) {
    if (!isMapping(raw)) continue
    // Anything but false: podman-compose passes --privileged for any truthy value (1, "false", "no").
    if (raw.privileged !== undefined && raw.privileged !== null && raw.privileged !== false)
      found.push(`service ${service} is privileged (privileged: ${JSON.stringify(raw.privileged)})`)
    for (const key of GRANTS) if (list(raw[key]).length > 0) found.push(`service ${service} sets ${key}`)
    for (const key of NAMESPACES) {
      const value = raw[key]
      if (value !== undefined && value !== null && !privateNamespace(key, value))
        found.push(`service ${service} sets ${key}: ${JSON.stringify(value)}`)
    }

    for (const from of list(raw.volumes_from))
      if (typeof from === 'string' && from.startsWith('container:'))
        found.push(`service ${service} takes volumes_from ${from}`)
    for (const entry of list(raw.volumes)) {
      const source =
        typeof entry === 'string'
          ? entry.split(':', 1)[0]
          : isMapping(entry) && entry.type === 'bind' && typeof entry.source === 'string'
            ? entry.source
            : undefined
      if (source !== undefined && source.startsWith('/') && !insideReal(source, root))
        found.push(`service ${service} binds ${source}`)
    }

    const build = typeof raw.build === 'string' ? {context: raw.build} : isMapping(raw.build) ? raw.build : undefined
    const contexts = build
      ? [build.context, ...Object.values(isMapping(build.additional_contexts) ? build.additional_contexts : {})]
      : []
    for (const context of contexts)
      if (typeof context === 'string' && context.startsWith('/') && !insideReal(context, root))
        found.push(`service ${service} builds from ${context}`)
    // A relative dockerfile is the build context's (compose specification, build "dockerfile").
    const from = build && typeof build.context === 'string' && build.context.startsWith('/') ? build.context : root
    if (build && typeof build.dockerfile === 'string') {
      if (!insideReal(path.resolve(from, build.dockerfile), root))
        found.push(`service ${service} builds with the Dockerfile ${build.dockerfile}`)
    } else if (build) {
      // Without one, the provider takes the first of these in the context, through a symlink too.
      for (const name of DEFAULT_BUILD_FILES) {
        const file = path.join(from, name)
        if (existsSync(file) && !insideReal(file, root))
          found.push(`service ${service} builds with ${file}, a link to ${realPath(file)}`)
      }
    }

    // podman's k8s-file log driver appends to the path it is given, as root on a rootful host.
    // The provider passes each option as --log-opt=KEY=VALUE and podman reads the key up to the
    // first `=`, whatever its case: `PATH`, `Path` and `"path=/x": y` are the same option.
    const logging = isMapping(raw.logging) ? raw.logging : undefined
    for (const [key, value] of Object.entries(logging && isMapping(logging.options) ? logging.options : {}))
      if (key.split('=', 1)[0].trim().toLowerCase() === 'path')
        found.push(`service ${service} writes its log to ${JSON.stringify(value)} (logging.options.${key})`)
    // podman-compose passes `pod:` on as --pod: the container joins that pod of the host's engine.
    if (raw.pod !== undefined && raw.pod !== null)
      found.push(`service ${service} joins the pod ${JSON.stringify(raw.pod)}`)
    // init-path: a host file bind-mounted and run as the container's init.
    if (typeof raw['init-path'] === 'string' || typeof raw.init_path === 'string')
      found.push(`service ${service} runs a host file as its init (init-path)`)
  }

  const volumes = isMapping(compose.volumes) ? compose.volumes : {}
  for (const [volume, raw] of Object.entries(volumes)) {
    if (!isMapping(raw)) continue
    if (isMapping(raw.driver_opts) && Object.keys(raw.driver_opts).length > 0)
      found.push(`volume ${volume} sets driver_opts`)
    else if (typeof raw.driver === 'string' && raw.driver !== 'local')
      found.push(`volume ${volume} uses driver ${raw.driver}`)
  }

  for (const table of ['configs', 'secrets']) {
    for (const [name, raw] of Object.entries(isMapping(compose[table]) ? compose[table] : {})) {
      if (!isMapping(raw)) continue
      const what = table.slice(0, -1)
      if (typeof raw.file === 'string' && !insideReal(path.resolve(root, raw.file), root))
        found.push(`${what} ${name} reads ${raw.file}`)
      // An existing one of the host's engine (`podman secret ls`): whatever the branch names.
      if (raw.external !== undefined && raw.external !== null && raw.external !== false)
        found.push(`${what} ${name} is external: the host engine's ${what} ${JSON.stringify(raw.name ?? name)}`)
      if (raw.environment !== undefined) found.push(`${what} ${name} reads the environment variable ${raw.environment}`)
    }
  }

  return found
}
