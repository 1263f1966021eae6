/**
 * The `kubectl` side of the `kubernetes` runtime (DESIGN.md §5.2): terminals and port-forwards go
 * through kubectl, which brings TTY size, resize and the kubeconfig's auth plugins. These are the
 * argv builders; every word yard puts there is checked, and the user's words stay arguments
 * after `--`, never script text.
 */
import type {SandboxPortForward} from '../../sdk/sandbox.js'

import {InputError} from '../../sdk/errors.js'
import {WORKSPACE_CONTAINER} from './manifest.js'

/** Which cluster and namespace kubectl talks to; always passed explicitly. */
export interface KubectlTarget {
  context: string
  namespace: string
}

/**
 * kubectl has no working-directory flag (DESIGN.md §5.2): this fixed script changes to its first
 * argument and runs the rest as a command. `sh` is `$0`; the directory and the command follow
 * as separate words.
 */
export const WORKDIR_SCRIPT = 'cd "$1" && shift && exec "$@"'

/** One `kubectl port-forward` pair: local `base + offset` → container `base` (DESIGN.md §3.4). */
export type PortForward = SandboxPortForward

/**
 * Refuses a word that kubectl would read as a flag.
 * @throws InputError (exit 2) naming what the word is and where it came from.
 */
function plain(word: string, what: string): string {
  if (word === '' || word.startsWith('-')) {
    throw new InputError(`the ${what} "${word}" cannot be handed to kubectl`, {
      why: 'an empty value, or one starting with "-", would be read as a flag',
      fix: `check the ${what} (yard config shows [cluster] context and namespace)`,
    })
  }

  return word
}

/** `kubectl --context C --namespace N`: every call names both, never kubectl's defaults. */
export function kubectlPrefix(target: KubectlTarget): string[] {
  return ['--context', plain(target.context, 'kube context'), '--namespace', plain(target.namespace, 'namespace')]
}

/**
 * `kubectl … exec [-i|-it] POD -c workspace -- [sh -c WORKDIR_SCRIPT sh DIR] [env K=V…] CMD…`
 * (DESIGN.md §5.2). `stdin` adds `-i` (stdin passed through, as `podman exec --interactive`);
 * `tty` makes it `-it` and is only given when yard's stdin is a terminal. `workdir` must be
 * absolute; `env` entries go through env(1), still as arguments.
 * @throws InputError (exit 2) for an empty command, a relative workdir or a name starting with "-".
 */
export function execArgv(
  target: KubectlTarget,
  pod: string,
  argv: string[],
  options: {workdir?: string; env?: Record<string, string>; stdin?: boolean; tty?: boolean} = {},
): string[] {
  if (argv.length === 0) throw new InputError('no command to run in the pod', {fix: 'give a command after --'})
  if (options.workdir !== undefined && !options.workdir.startsWith('/'))
    throw new InputError(`the pod directory "${options.workdir}" is not absolute`, {fix: 'use a path under /work'})
  const interactive = options.tty ? ['-it'] : options.stdin ? ['-i'] : []
  const env = Object.entries(options.env ?? {}).map(
    ([key, value]) => `${plain(key, 'environment variable name')}=${value}`,
  )
  const command = [...(env.length > 0 ? ['env', ...env] : []), ...argv]
  const inDirectory =
    options.workdir === undefined ? command : ['sh', '-c', WORKDIR_SCRIPT, 'sh', options.workdir, ...command]
  return [
    ...kubectlPrefix(target),
    'exec',
    ...interactive,
    plain(pod, 'pod name'),
    '-c',
    WORKSPACE_CONTAINER,
    '--',
    ...inDirectory,
  ]
}

/**
 * `kubectl … cp -c workspace POD:PATH HOST_PATH`: one file out of the pod (kubectl cp uses tar
 * in the container, which yard's image has).
 * @throws InputError (exit 2) for a relative path, or a host path holding ":" (kubectl would read
 *   it as `pod:path`).
 */
export function copyOutArgv(target: KubectlTarget, pod: string, podPath: string, hostPath: string): string[] {
  if (!podPath.startsWith('/') || !hostPath.startsWith('/'))
    throw new InputError(`kubectl cp needs absolute paths, got ${podPath} and ${hostPath}`, {
      fix: 'pass absolute paths',
    })
  if (hostPath.includes(':'))
    throw new InputError(`the host path ${hostPath} holds ":", which kubectl cp reads as POD:PATH`, {
      fix: 'choose a state directory without ":" (YARD_STATE_DIR)',
    })
  return [...kubectlPrefix(target), 'cp', '-c', WORKSPACE_CONTAINER, `${plain(pod, 'pod name')}:${podPath}`, hostPath]
}

/** `kubectl … port-forward pod/POD LOCAL:CONTAINER…` (DESIGN.md §5.2, `yard sandbox forward`). */
export function portForwardArgv(target: KubectlTarget, pod: string, forwards: PortForward[]): string[] {
  return [
    ...kubectlPrefix(target),
    'port-forward',
    `pod/${plain(pod, 'pod name')}`,
    ...forwards.map((forward) => `${forward.local}:${forward.container}`),
  ]
}
