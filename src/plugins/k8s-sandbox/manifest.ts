/**
 * The sandbox Pod (DESIGN.md §5.2), the same object for every runtime: a cluster gets it through
 * the API, the podman runtime through `podman kube play`. A plain object, serialised with `yaml`.
 */

import type {SandboxSpec} from '../../sdk/sandbox.js'
import type {Target} from '../../sdk/target.js'

import {NAME_LABEL, OFFSET_LABEL, OWNER_LABEL, PREFIX_LABEL, PROJECT_LABEL} from '../../sdk/labels.js'
import {withoutCredentials} from '../../sdk/repo-url.js'

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by'
export {NAME_LABEL, OFFSET_LABEL, OWNER_LABEL, PREFIX_LABEL} from '../../sdk/labels.js'
/** The SandboxSpec the pod was made from, as JSON: what attach, exec and rm read back. */
export const SPEC_ANNOTATION = 'yard.dev/spec'

/** The emptyDir volume mounted at `/work`. */
export const WORK_VOLUME = 'work'

/** The one container of a sandbox. */
export const WORKSPACE_CONTAINER = 'workspace'

/**
 * An image imported from a root filesystem has no environment at all, and `podman kube play`
 * (unlike `podman run`) adds no PATH, so the pod says it: `sleep` and `git` are found by name.
 */
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

/** Where a cache is mounted in the pod: the same path everywhere, since alternates store it. */
export const repoMountPath = (key: string) => `/repos/${key}`

/** Pod labels (DESIGN.md §5.2); the offset label is the source of truth for an existing sandbox. */
export function sandboxLabels(target: Target): Record<string, string> {
  return {
    [MANAGED_BY_LABEL]: 'yard',
    [PROJECT_LABEL]: target.project,
    [NAME_LABEL]: target.name,
    [OWNER_LABEL]: target.owner,
    [OFFSET_LABEL]: String(target.offset),
    [PREFIX_LABEL]: target.prefix,
  }
}

/**
 * The Pod of DESIGN.md §5.2: named with the project name; container `workspace` running
 * `sleep infinity` from `spec.image` (`IfNotPresent`); per repository a `DirectoryOrCreate`
 * hostPath volume on `<cache root>/<key>` mounted read-only at `/repos/<key>`; `/work` an
 * emptyDir; no service-account token; no privilege escalation. Each `[ports]` key is a container
 * port `base` with host port `base + offset` (published by the podman runtime; a cluster ignores
 * hostPort-less forwarding and uses port-forwards).
 */
export function podManifest(target: Target, spec: SandboxSpec): Record<string, unknown> {
  // Two slots may hold one repository: one volume per cache key.
  // Submodules' caches too: attach clones the submodules from them (attach-submodules.ts).
  const keys = spec.repos.flatMap((repo) => [repo.key, ...(repo.submodules ?? []).map((submodule) => submodule.key)])
  const repoVolumes = [...new Set(keys)].map((key) => ({name: `repo-${key}`, key}))
  const ports = Object.entries(spec.portBases).map(([key, base]) => ({
    name: portName(key),
    containerPort: base,
    ...(spec.runtime === 'podman' && {hostPort: target.ports[key]}),
  }))
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: target.project,
      labels: sandboxLabels(target),
      // Credentials never reach the pod (another user may read the Pod or its annotations).
      annotations: {
        [SPEC_ANNOTATION]: JSON.stringify({
          ...spec,
          repos: spec.repos.map((repo) => ({...repo, url: withoutCredentials(repo.url)})),
        }),
      },
    },
    spec: {
      automountServiceAccountToken: false,
      restartPolicy: 'Always',
      containers: [
        {
          name: WORKSPACE_CONTAINER,
          image: spec.image,
          imagePullPolicy: 'IfNotPresent',
          command: ['sleep', 'infinity'],
          workingDir: '/work',
          env: [{name: 'PATH', value: DEFAULT_PATH}],
          securityContext: {allowPrivilegeEscalation: false},
          ...(ports.length > 0 && {ports}),
          volumeMounts: [
            ...repoVolumes.map((volume) => ({name: volume.name, mountPath: repoMountPath(volume.key), readOnly: true})),
            {name: WORK_VOLUME, mountPath: '/work'},
          ],
        },
      ],
      volumes: [
        ...repoVolumes.map((volume) => ({
          name: volume.name,
          hostPath: {path: `${spec.cacheRoot}/${volume.key}`, type: 'DirectoryOrCreate'},
        })),
        {name: WORK_VOLUME, emptyDir: {}},
      ],
    },
  }
}

/** A Kubernetes port name: at most 15 characters of a-z, 0-9 and inner `-`. */
function portName(key: string): string {
  const name = key
    .toLowerCase()
    .replaceAll(/[^a-z0-9]+/g, '-')
    .replaceAll(/^-+|-+$/g, '')
    .slice(0, 15)
    .replace(/-+$/, '')
  return /[a-z]/.test(name) ? name : `p-${name}`.slice(0, 15)
}
