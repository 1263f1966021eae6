/**
 * Fixtures of the kubernetes-runtime tests (DESIGN.md §5.2, §8): the fake API server with the
 * Repo CRD and namespace `yard`, a scripted "cluster" reacting to pod creates (scheduler and
 * kubelet: Ready on a node, or stuck Pending with events; the node's cache agent: a Repo status
 * entry), the fake kubectl first on PATH, and `yard` as an async child process (a sync one
 * would block this process, which serves the fake API).
 */
import {spawn} from 'node:child_process'
import path from 'node:path'

import type {SandboxFixture} from './support.js'

import {repoCrd} from '../../../src/plugins/k8s-sandbox/repo-resource.js'
import {
  type CreatedObject,
  type FakeKubeApi,
  type KubeObject,
  startFakeKubeApi,
} from '../../support/fake-kube-api/index.js'
import {FakeKubectl} from '../../support/fake-kubectl.js'
import {projectRoot} from '../../support/yard.js'

/** Every podman object these tests make starts with this (never sweep wider). */
export const K2_TEST_PREFIX = 'yardtest-k2'

export const NAMESPACE = 'yard'

/** What the scripted cluster does with a new pod. */
export type PodScript =
  | {kind: 'ready'; node: string; agent: 'present' | 'silent' | {lastError: string}; agentDelayMs?: number}
  | {kind: 'stuck'; message: string; events: Array<{reason: string; message: string}>}

/** The fake API server plus the scripted scheduler, kubelet and cache agent. */
export class FakeCluster {
  /** Per pod name; pods not listed get `fallback`. */
  readonly scripts = new Map<string, PodScript>()
  fallback: PodScript = {kind: 'ready', node: 'node-b', agent: 'present', agentDelayMs: 300}
  /**
   * Whether the scripted agents answer an ask (a Repo's `spec.askedAt`): every node whose entry
   * says present reports it fetched and the ask served, a little later. A test running the real
   * agent turns this off.
   */
  answerAsks = true
  readonly kubectl = new FakeKubectl()
  /**
   * The node's kubelet, when a test has one (fake-kubelet.ts): runs once the pod is bound to its
   * node and before it is Ready, as a kubelet starts the containers of a pod scheduled on it.
   */
  kubelet?: (pod: KubeObject) => Promise<void>
  /** Called after every create through the API (a test injects a failure for what follows). */
  onCreated?: (created: CreatedObject) => void
  private readonly timers: NodeJS.Timeout[] = []

  private constructor(readonly api: FakeKubeApi) {}

  static async start(): Promise<FakeCluster> {
    let cluster: FakeCluster | undefined
    const api = await startFakeKubeApi({
      namespaces: [NAMESPACE],
      crds: [repoCrd()],
      async onCreate(created) {
        cluster!.onCreated?.(created)
        if (created.resource === 'pods') await cluster!.react(created.object)
      },
      onPatch(patched) {
        const askedAt = (patched.patch as {spec?: {askedAt?: string}}).spec?.askedAt
        if (patched.resource === 'repos' && askedAt && cluster!.answerAsks) cluster!.answer(patched.object, askedAt)
      },
    })
    cluster = new FakeCluster(api)
    return cluster
  }

  /** Env for yard: the fake kubeconfig (context `fake`) and the fake kubectl first on PATH. */
  get env(): Record<string, string | undefined> {
    return {
      ...this.kubectl.env,
      KUBECONFIG: this.api.kubeconfigPath,
      YARD_KUBE_CONTEXT: undefined,
      YARD_NAMESPACE: undefined,
    }
  }

  /** A node's cache agent writing its entry of a Repo's status (as K3's agent does). */
  async report(key: string, node: string, entry: {present: boolean; lastError?: string | null}): Promise<KubeObject> {
    return this.api.patchStatus('repos.yard.dev', NAMESPACE, key, {
      nodes: {
        [node]: {
          present: entry.present,
          lastFetched: entry.present ? new Date().toISOString().replace(/\.\d+Z$/, 'Z') : null,
          lastError: entry.lastError ?? null,
        },
      },
    })
  }

  /** Every node holding the Repo's cache reports a fetch that served `askedAt`. */
  // eslint-disable-next-line @typescript-eslint/no-unused-private-class-members -- called from start()'s callbacks
  private answer(repo: KubeObject, askedAt: string): void {
    const nodes = Object.entries((repo.status?.nodes ?? {}) as Record<string, {present?: boolean}>)
      .filter(([, entry]) => entry.present)
      .map(([node]) => node)
    this.timers.push(
      setTimeout(() => {
        const lastFetched = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
        for (const node of nodes)
          void this.api
            .patchStatus('repos.yard.dev', NAMESPACE, repo.metadata.name as string, {
              nodes: {[node]: {present: true, lastFetched, lastError: null, lastAsked: askedAt}},
            })
            .catch(() => undefined)
      }, 100),
    )
  }

  // eslint-disable-next-line @typescript-eslint/no-unused-private-class-members -- called from start()'s callbacks
  private async react(pod: KubeObject): Promise<void> {
    const name = pod.metadata.name as string
    const script = this.scripts.get(name) ?? this.fallback
    if (script.kind === 'stuck') {
      await this.api.setPodUnschedulable(NAMESPACE, name, script.message)
      for (const event of script.events) await this.api.addEvent(pod, {...event, type: 'Warning'})
      return
    }

    if (this.kubelet) {
      await this.api.put({...pod, spec: {...pod.spec, nodeName: script.node}})
      await this.kubelet(pod)
    }

    await this.api.setPodReady(NAMESPACE, name, {node: script.node})
    if (script.agent === 'silent') return
    const keys = ((pod.spec.volumes ?? []) as KubeObject[])
      .filter((volume) => volume.hostPath)
      .map((volume) => path.basename(volume.hostPath.path as string))
    const {agent} = script
    // The agent answers a little later, as it would after its watch fires and the clone runs.
    this.timers.push(
      setTimeout(() => {
        for (const key of keys) {
          void this.report(
            key,
            script.node,
            agent === 'present' ? {present: true} : {present: false, lastError: agent.lastError},
          ).catch(() => undefined)
        }
      }, script.agentDelayMs ?? 0),
    )
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer)
    await this.api.close()
  }
}

/** `yard …` as an async child process in the fixture's main checkout (exec hands it kubectl's terminal). */
export async function cliAsync(
  fixture: SandboxFixture,
  env: Record<string, string | undefined>,
  args: string[],
): Promise<{status: number; stdout: string; stderr: string}> {
  const childEnv: NodeJS.ProcessEnv = {...process.env}
  for (const [key, value] of Object.entries({...fixture.env, ...env})) {
    if (value === undefined) delete childEnv[key]
    else childEnv[key] = value
  }

  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(projectRoot, 'bin', 'dev.js'), ...args], {
      cwd: fixture.app,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({status: code ?? 1, stdout, stderr}))
  })
}

/** The shell line running `yard …` in the fixture with `env` (for a tmux pane). */
export function cliLineWith(fixture: SandboxFixture, env: Record<string, string | undefined>, args: string[]): string {
  const quote = (word: string) => `'${word.replaceAll("'", String.raw`'\''`)}'`
  const all = {...fixture.env, ...env}
  const unset = Object.keys(all)
    .filter((key) => all[key] === undefined)
    .flatMap((key) => ['-u', key])
  const set = Object.entries(all)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${quote(value!)}`)
  return `cd ${quote(fixture.app)} && env ${unset.join(' ')} ${set.join(' ')} ${quote(process.execPath)} ${quote(path.join(projectRoot, 'bin', 'dev.js'))} ${args.map(quote).join(' ')}`
}
