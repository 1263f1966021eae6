/**
 * A deploy key through `yard cluster credentials set … --ssh-key` (DESIGN.md §5.2; issue 23).
 * No ssh server can run on these machines, so the host is a fake `ssh` first on PATH — what
 * `GIT_SSH_COMMAND` names — that lets in only the deploy key it was given, with the known-hosts
 * file, and then serves `git-upload-pack` on this machine. The node is `yard cache agent
 * --kubernetes --once` with the DaemonSet's rendered environment, its credentials mount filled
 * from the Secret as the kubelet would.
 */
import {expect} from 'chai'
import {chmodSync, existsSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import type {CacheAgentPass} from '../../../src/sdk/cache.js'

import {clusterObjects, CREDENTIALS_DIR, CREDENTIALS_SECRET} from '../../../src/plugins/k8s-sandbox/cluster-objects.js'
import {repoCrd, repoObject} from '../../../src/plugins/k8s-sandbox/repo-resource.js'
import {repoIdentity} from '../../../src/sdk/repo-identity.js'
import {type FakeKubeApi, type KubeObject, startFakeKubeApi} from '../../support/fake-kube-api/index.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'
import {yard, type YardRun} from '../../support/yard.js'
import {git, makeUpstream} from './support.js'

const NAMESPACE = 'yard'
const NODE = 'node-a'
const KEY_TEXT =
  '-----BEGIN OPENSSH PRIVATE KEY-----\nZGVwbG95LWtleS1vZi10aGUtdGVzdA==\n-----END OPENSSH PRIVATE KEY-----\n'
const HOSTS = 'git.test ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeHostKeyOfGitTest\n'

/** A fake ssh: exit 255 unless `-i` names a file holding KEY_TEXT and known hosts are given; then upload-pack here. */
function fakeSsh(bin: string, log: string): void {
  const file = path.join(bin, 'ssh')
  writeFileSync(
    file,
    String.raw`#!${process.execPath}
const {spawn} = require('node:child_process')
const {appendFileSync, readFileSync} = require('node:fs')
const args = process.argv.slice(2)
appendFileSync(${JSON.stringify(log)}, JSON.stringify(args) + '\n')
const key = args[args.indexOf('-i') + 1]
let ok = false
try { ok = args.includes('-i') && readFileSync(key, 'utf8') === ${JSON.stringify(KEY_TEXT)} } catch {}
const hosts = args.find((arg) => arg.startsWith('UserKnownHostsFile='))
if (!ok || !hosts || !readFileSync(hosts.slice('UserKnownHostsFile='.length), 'utf8').includes('git.test')) {
  process.stderr.write('git@git.test: Permission denied (publickey).\n')
  process.exit(255)
}
const match = /^git-upload-pack '(.*)'$/.exec(args[args.length - 1])
const child = spawn('git', ['upload-pack', match[1]], {stdio: 'inherit'})
child.on('close', (code) => process.exit(code ?? 1))
`,
  )
  chmodSync(file, 0o755)
}

describe('git-cache: a private ssh repository through a deploy key (yard cluster credentials --ssh-key)', function () {
  this.timeout(60_000)
  let api: FakeKubeApi
  let upstream: string
  let url: string
  let root: string
  let mount: string
  let log: string
  let agentEnv: Record<string, string | undefined>
  const outputs: YardRun[] = []

  before(async () => {
    upstream = makeUpstream('deploy')
    url = `ssh://git@git.test${upstream}`
    api = await startFakeKubeApi({namespaces: [NAMESPACE], crds: [repoCrd()]})
    root = path.join(tempDir('yard-node'), 'caches')
    mount = tempDir('yard-credentials-mount')
    const bin = tempDir('yard-fake-ssh')
    log = path.join(bin, 'argv.log')
    fakeSsh(bin, log)
    const container = (
      clusterObjects({namespace: NAMESPACE, cacheRoot: root, image: 'localhost/yard-agent:test', version: 'test'}).find(
        (object) => object.kind === 'DaemonSet',
      ) as KubeObject
    ).spec.template.spec.containers[0]
    const tmp = tempDir('yard-agent-tmp')
    const local = (value: string) =>
      value.startsWith(CREDENTIALS_DIR)
        ? mount + value.slice(CREDENTIALS_DIR.length)
        : value === '/tmp' || value === '/tmp/yard'
          ? tmp + value.slice('/tmp'.length)
          : value
    const fields: Record<string, string> = {'spec.nodeName': NODE, 'metadata.namespace': NAMESPACE}
    agentEnv = Object.fromEntries(
      (container.env as Array<{name: string; value?: string; valueFrom?: {fieldRef: {fieldPath: string}}}>).map(
        (entry) => [
          entry.name,
          entry.value === undefined ? fields[entry.valueFrom!.fieldRef.fieldPath] : local(entry.value),
        ],
      ),
    )
    Object.assign(agentEnv, {
      KUBECONFIG: api.kubeconfigPath,
      YARD_KUBE_CONTEXT: undefined,
      PATH: `${bin}:${process.env.PATH}`,
    })
    await api.put(repoObject(repoIdentity(url).key, NAMESPACE, {url, prefetch: true}))
  })

  after(async () => {
    await api.close()
    cleanupTemp()
  })

  const key = () => repoIdentity(url).key
  const entry = () =>
    api.get('repos.yard.dev', NAMESPACE, key())?.status?.nodes?.[NODE] as
      {present: boolean; lastError?: string; credentials?: string} | undefined
  const cli = async (args: string[], env: Record<string, string | undefined> = {}) => {
    const run = await yard(args, {
      cwd: tempDir('yard-cwd'),
      env: {KUBECONFIG: api.kubeconfigPath, YARD_NAMESPACE: NAMESPACE, YARD_KUBE_CONTEXT: undefined, ...env},
    })
    outputs.push(run)
    return run
  }

  const agent = async () => {
    const run = await cli(['cache', 'agent', '--kubernetes', '--once', '--json'], agentEnv)
    expect(run.exitCode, run.stderr).to.equal(0)
    return run.json as Required<CacheAgentPass>
  }

  it('without the key the node says credentials are missing; with it the agent clones through GIT_SSH_COMMAND, and the key stays in the Secret', async () => {
    expect((await agent()).failed).to.deep.equal([key()])
    expect(entry()?.lastError)
      .to.include('Permission denied (publickey)')
      .and.to.include(`no yard cluster credentials match ${url}`)

    const keyFile = path.join(tempDir('yard-deploy-key'), 'id_deploy')
    const hostsFile = path.join(path.dirname(keyFile), 'known_hosts')
    writeFileSync(keyFile, KEY_TEXT, {mode: 0o600})
    writeFileSync(hostsFile, HOSTS)
    const set = await cli([
      'cluster',
      'credentials',
      'set',
      'ssh://git@git.test/',
      '--ssh-key',
      keyFile,
      '--known-hosts',
      hostsFile,
      '--json',
    ])
    expect(set.exitCode, set.stderr).to.equal(0)
    expect(set.json).to.deep.include({
      entry: {prefix: 'ssh://git@git.test/', kind: 'ssh', username: null, knownHosts: true},
    })
    const secret = api.get('secrets', NAMESPACE, CREDENTIALS_SECRET)!
    for (const [name, value] of Object.entries(secret.data as Record<string, string>))
      writeFileSync(path.join(mount, name), Buffer.from(value, 'base64'), {mode: 0o400})

    await api.put({
      ...api.get('repos.yard.dev', NAMESPACE, key())!,
      spec: {url, prefetch: true, askedAt: new Date().toISOString()},
    })
    expect((await agent()).cloned).to.deep.equal([key()])
    expect(git(path.join(root, key()), ['rev-parse', 'main'])).to.equal(git(upstream, ['rev-parse', 'main']))
    expect(entry()).to.include({present: true, credentials: 'ssh://git@git.test/'})
    const last = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as string[])
      .at(-1)!
    expect(last).to.include.members(['-i', 'IdentitiesOnly=yes', 'IdentityAgent=none', 'StrictHostKeyChecking=yes'])
    expect(path.dirname(last[last.indexOf('-i') + 1])).to.equal(mount)

    const body = KEY_TEXT.split('\n', 2)[1]
    for (const output of outputs) expect(output.stdout + output.stderr).to.not.include(body)
    expect(JSON.stringify({repos: api.objects('repos.yard.dev'), pods: api.objects('pods')})).to.not.include(body)
    const files = readdirSync(root, {recursive: true, withFileTypes: true})
      .filter((item) => item.isFile())
      .map((item) => path.join(item.parentPath, item.name))
    expect(files.filter((file) => readFileSync(file).includes(body))).to.deep.equal([])
    expect(git(path.join(root, key()), ['config', '--local', '--list'])).to.not.include('ssh-key')
    expect(existsSync(path.join(root, key(), 'HEAD'))).to.equal(true)
  })
})
