import type {V1Secret} from '@kubernetes/client-node'

/**
 * The cluster's repository credentials (DESIGN.md §5.2: private repositories need an HTTPS token
 * or a deploy key): one Secret, CREDENTIALS_SECRET, in `[cluster] namespace`, labelled for yard,
 * that the cache agent's pods mount read-only (cluster-objects.ts) and read through git's own
 * mechanisms (git-cache/credentials.ts). Per url prefix one entry, its keys named by
 * `c<12 hex of sha256(prefix)>`: `.prefix`, then `.username` and `.token` (https) or `.ssh-key`
 * and maybe `.known-hosts` (ssh). Entries are written with JSON merge patches (RFC 7386) of
 * `data`, so entries of other prefixes stay; a replaced entry's other keys are removed (null).
 * Nothing here returns or logs a secret value.
 */
import {createHash} from 'node:crypto'

import type {ClusterCredential, ClusterCredentialInput} from '../../sdk/sandbox.js'

import {CREDENTIALS_SECRET} from './cluster-objects.js'
import {type Kube, kubeCall, kubeGet} from './kube.js'

const SUFFIXES = ['prefix', 'username', 'token', 'ssh-key', 'known-hosts'] as const

/** The entry id of a url prefix: `c` + the first 12 hex of its sha256. */
export function credentialId(prefix: string): string {
  return `c${createHash('sha256').update(prefix, 'utf8').digest('hex').slice(0, 12)}`
}

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64')
const unb64 = (text: string) => Buffer.from(text, 'base64').toString('utf8')

async function readSecret(kube: Kube): Promise<V1Secret | undefined> {
  return kubeGet(kube, `read the Secret ${kube.namespace}/${CREDENTIALS_SECRET}`, async () =>
    kube.core.readNamespacedSecret({name: CREDENTIALS_SECRET, namespace: kube.namespace}),
  )
}

/** The Secret's data for one entry: its keys set, the keys of the other kind removed (null). */
function entryData(input: ClusterCredentialInput): Record<string, string | null> {
  const id = credentialId(input.prefix)
  const values: Partial<Record<(typeof SUFFIXES)[number], string>> =
    input.kind === 'token'
      ? {prefix: input.prefix, username: input.username, token: input.token}
      : {
          prefix: input.prefix,
          'ssh-key': input.key.endsWith('\n') ? input.key : `${input.key}\n`,
          ...(input.knownHosts && {'known-hosts': input.knownHosts}),
        }
  return Object.fromEntries(
    SUFFIXES.map((suffix) => [`${id}.${suffix}`, values[suffix] === undefined ? null : b64(values[suffix])]),
  )
}

/**
 * Creates the Secret with this entry, or merge-patches the entry into it.
 * @throws OperationError (exit 1) when the API refuses (rights: get, create, patch on secrets).
 */
export async function setCredential(
  kube: Kube,
  input: ClusterCredentialInput,
): Promise<{action: 'created' | 'updated'; secret: string}> {
  const data = entryData(input)
  const what = `the Secret ${kube.namespace}/${CREDENTIALS_SECRET}`
  if (!(await readSecret(kube))) {
    const body: V1Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: CREDENTIALS_SECRET,
        namespace: kube.namespace,
        labels: {
          'app.kubernetes.io/managed-by': 'yard',
          'app.kubernetes.io/part-of': 'yard',
          'app.kubernetes.io/component': 'cache-credentials',
        },
      },
      type: 'Opaque',
      data: Object.fromEntries(Object.entries(data).filter((entry): entry is [string, string] => entry[1] !== null)),
    }
    await kubeCall(kube, `create ${what}`, async () =>
      kube.core.createNamespacedSecret({namespace: kube.namespace, body}),
    )
    return {action: 'created', secret: CREDENTIALS_SECRET}
  }

  await kubeCall(kube, `update ${what}`, async () =>
    kube.core.patchNamespacedSecret(
      {name: CREDENTIALS_SECRET, namespace: kube.namespace, body: {data}},
      kube.mergePatch,
    ),
  )
  return {action: 'updated', secret: CREDENTIALS_SECRET}
}

/** Every entry of the Secret (none without it), sorted by prefix; secrets are not decoded. */
export async function listCredentials(kube: Kube): Promise<ClusterCredential[]> {
  const data = (await readSecret(kube))?.data ?? {}
  const entries: ClusterCredential[] = []
  for (const [name, value] of Object.entries(data)) {
    const id = /^(c[0-9a-f]{12})\.prefix$/.exec(name)?.[1]
    if (!id) continue
    const kind = `${id}.token` in data ? 'token' : `${id}.ssh-key` in data ? 'ssh' : undefined
    if (!kind) continue
    entries.push({
      prefix: unb64(value),
      kind,
      username: kind === 'token' && data[`${id}.username`] ? unb64(data[`${id}.username`]) : null,
      knownHosts: `${id}.known-hosts` in data,
    })
  }

  return entries.sort((a, b) => a.prefix.localeCompare(b.prefix))
}

/** Removes one prefix's entry (its keys set to null); false when the Secret has none. */
export async function removeCredential(kube: Kube, prefix: string): Promise<boolean> {
  const id = credentialId(prefix)
  const data = (await readSecret(kube))?.data ?? {}
  if (!(`${id}.prefix` in data)) return false
  const body = {data: Object.fromEntries(SUFFIXES.map((suffix) => [`${id}.${suffix}`, null]))}
  await kubeCall(kube, `update the Secret ${kube.namespace}/${CREDENTIALS_SECRET}`, async () =>
    kube.core.patchNamespacedSecret({name: CREDENTIALS_SECRET, namespace: kube.namespace, body}, kube.mergePatch),
  )
  return true
}
