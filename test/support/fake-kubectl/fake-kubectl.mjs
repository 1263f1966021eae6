/**
 * A FAKE `kubectl` for tests (DESIGN.md §8): no Kubernetes API server or kubelet runs on the test
 * hosts, so a pod created through the fake API server (test/support/fake-kube-api/) has no
 * container to exec into. The arrangement:
 *
 * - the test first creates the same-named sandbox with the podman runtime (real `podman kube
 *   play` of the same manifest: same pod name, same `workspace` container, the cache mounted at
 *   `/repos/<key>`), then creates it with the kubernetes runtime against the fake API server;
 * - yard's `kubectl --context C --namespace N exec [-i|-it] POD -c workspace -- CMD…` becomes
 *   `podman exec [-i] [-t] POD-workspace CMD…` (podman names a played pod's container
 *   `<pod>-<container>`), so attach, unsaved-work checks and `yard exec` run real git in a real
 *   container, and the exit code comes back as kubectl's would;
 * - `kubectl … cp -c workspace POD:PATH DEST` becomes `podman cp POD-workspace:PATH DEST`;
 * - `kubectl … port-forward pod/POD L:C…` prints kubectl's "Forwarding from" lines and exits 0
 *   (with FAKE_KUBECTL_FORWARD_HOLD=1 it waits for SIGINT or SIGTERM, as kubectl does).
 *
 * What it validates, failing like kubectl (exit 1, "error: …"): `--context` and `--namespace`
 * are given, the context exists in $KUBECONFIG (when set) and, for exec and cp, the pod exists
 * on that context's API server (a GET, as kubectl does), the verb is one of the three, exec
 * names container `workspace` and puts the command after `--`, a forward is `pod/NAME` with
 * `LOCAL:CONTAINER` pairs. `-t` without a terminal on stdin is dropped with kubectl's warning.
 *
 * Every call is appended to $FAKE_KUBECTL_LOG (required) as one JSON line {argv, stdinTTY}.
 */
import {spawnSync} from 'node:child_process'
import {appendFileSync, readFileSync} from 'node:fs'

const args = process.argv.slice(2)
const LOG = process.env.FAKE_KUBECTL_LOG

function fail(message, code = 1) {
  process.stderr.write(`error: ${message}\n`)
  process.exit(code)
}

if (!LOG) fail('fake kubectl: FAKE_KUBECTL_LOG is not set')
appendFileSync(LOG, JSON.stringify({argv: args, stdinTTY: Boolean(process.stdin.isTTY)}) + '\n')

// Global flags come first in every argv yard builds.
const globals = {}
let index = 0
while (index < args.length && args[index].startsWith('--')) {
  const [flag, inline] = args[index].split(/=(.*)/s, 2)
  if (flag !== '--context' && flag !== '--namespace') break
  const value = inline ?? args[index + 1]
  if (value === undefined || value === '' || value.startsWith('-')) fail(`flag needs an argument: ${flag}`)
  globals[flag.slice(2)] = value
  index += inline === undefined ? 2 : 1
}

if (!globals.context || !globals.namespace)
  fail('fake kubectl: yard always names --context and --namespace before the verb')
const server = await checkContext(globals.context)

const verb = args[index]
const rest = args.slice(index + 1)
if (verb === 'exec') await execVerb(rest)
else if (verb === 'cp') await cpVerb(rest)
else if (verb === 'port-forward') await forwardVerb(rest)
else fail(`fake kubectl: unsupported verb "${verb ?? ''}" (exec, cp and port-forward are emulated)`)

/** The context must exist in the kubeconfig, as kubectl checks; resolves with its server url. */
async function checkContext(context) {
  const file = process.env.KUBECONFIG
  if (!file) return undefined
  const {parse} = await import('yaml')
  const config = parse(readFileSync(file.split(':', 1)[0], 'utf8'))
  const entry = (config?.contexts ?? []).find((candidate) => candidate.name === context)
  if (!entry) fail(`context "${context}" does not exist`)
  return (config.clusters ?? []).find((cluster) => cluster.name === entry.context.cluster)?.cluster?.server
}

/** Like kubectl, exec and cp first read the pod from the API server: it must exist there. */
async function requireClusterPod(pod) {
  if (!server) return
  const response = await fetch(
    `${server}/api/v1/namespaces/${encodeURIComponent(globals.namespace)}/pods/${encodeURIComponent(pod)}`,
  ).catch((error) => fail(`Unable to connect to the server: ${error.message}`))
  if (response.status === 404) fail(`Error from server (NotFound): pods "${pod}" not found`)
  if (!response.ok) fail(`Error from server: ${response.status} ${await response.text()}`)
}

function podman(argv, options = {}) {
  return spawnSync('podman', argv, {stdio: 'inherit', ...options})
}

/** The podman-runtime pod the command really runs in (see the header). */
function requirePlayedPod(pod) {
  if (podman(['container', 'exists', `${pod}-workspace`], {stdio: 'ignore'}).status !== 0)
    fail(`fake kubectl: no podman-runtime pod ${pod} to run in: create the same sandbox with --runtime podman first`)
}

async function execVerb(words) {
  const dash = words.indexOf('--')
  if (dash === -1) fail('fake kubectl: exec without "--" before the command (kubectl deprecated that form)')
  const command = words.slice(dash + 1)
  if (command.length === 0) fail('you must specify at least one command for the container')
  let stdin = false
  let tty = false
  let container
  let pod
  for (let i = 0; i < dash; i++) {
    const word = words[i]
    if (word === '-i' || word === '--stdin') stdin = true
    else if (word === '-t' || word === '--tty') tty = true
    else if (word === '-it' || word === '-ti') stdin = tty = true
    else if (word === '-c' || word === '--container') container = words[++i]
    else if (word.startsWith('-')) fail(`fake kubectl: unexpected exec flag ${word}`)
    else if (pod === undefined) pod = word
    else fail(`fake kubectl: a second pod name ${word}`)
  }

  if (!pod) fail('expected POD')
  if (container !== 'workspace') fail(`fake kubectl: yard execs in container "workspace", got ${container ?? 'none'}`)
  if (tty && !process.stdin.isTTY) {
    process.stderr.write('Unable to use a TTY - input is not a terminal or the right kind of file\n')
    tty = false
  }

  await requireClusterPod(pod)
  requirePlayedPod(pod)
  const result = podman(['exec', ...(stdin ? ['-i'] : []), ...(tty ? ['-t'] : []), `${pod}-workspace`, ...command])
  process.exit(result.status ?? 1)
}

async function cpVerb(words) {
  let container
  const paths = []
  for (let i = 0; i < words.length; i++) {
    if (words[i] === '-c' || words[i] === '--container') container = words[++i]
    else if (words[i].startsWith('-')) fail(`fake kubectl: unexpected cp flag ${words[i]}`)
    else paths.push(words[i])
  }

  if (container !== 'workspace')
    fail(`fake kubectl: yard copies from container "workspace", got ${container ?? 'none'}`)
  if (paths.length !== 2 || !/^[a-z0-9-]+:\//.test(paths[0])) fail('fake kubectl: cp POD:/PATH DEST expected')
  const [pod, podPath] = [paths[0].slice(0, paths[0].indexOf(':')), paths[0].slice(paths[0].indexOf(':') + 1)]
  await requireClusterPod(pod)
  requirePlayedPod(pod)
  process.exit(podman(['cp', `${pod}-workspace:${podPath}`, paths[1]]).status ?? 1)
}

async function forwardVerb(words) {
  const [resource, ...pairs] = words
  if (!resource?.startsWith('pod/')) fail(`fake kubectl: port-forward pod/NAME expected, got ${resource ?? 'nothing'}`)
  if (pairs.length === 0) fail('at least 1 PORT is required for port-forward')
  for (const pair of pairs) {
    const match = /^(\d+):(\d+)$/.exec(pair)
    if (!match || Number(match[1]) > 65_535 || Number(match[2]) > 65_535)
      fail(`fake kubectl: LOCAL:CONTAINER expected, got ${pair}`)
    process.stdout.write(`Forwarding from 127.0.0.1:${match[1]} -> ${match[2]}\n`)
  }

  if (process.env.FAKE_KUBECTL_FORWARD_HOLD === '1') {
    await new Promise((resolve) => {
      process.once('SIGINT', resolve)
      process.once('SIGTERM', resolve)
      setInterval(() => {}, 60_000)
    })
  }

  process.exit(0)
}
