/**
 * Host ports of a claimed pool pod on the podman runtime (docs/sandboxes.md, "Warm pool"). A
 * pool pod is made before its sandbox's offset exists, so it publishes nothing, and podman cannot
 * publish a port on a pod that runs. The claim instead starts this relay, a detached
 * `yard sandbox pool relay NAME`: per `[ports]` key it listens on the host port `base + offset`
 * (every IPv4 address, as podman publishes) and pipes every connection to the pod's address on the
 * container port `base`, so the sandbox answers on the same host ports a cold one publishes; a
 * connection the pod's port does not take within 3 s (nothing listens, the pod stopped) is reset,
 * as a client of a cold sandbox's port would be refused.
 *
 * The pod's address is its infra container's on podman's network: reachable from the host with
 * rootful podman (netavark's bridge); rootless pods have none the host reaches, and a sandbox with
 * `[ports]` is then made cold. The relay writes `<state dir>/sandboxes/<project>.relay` (its pid)
 * once every port listens, and ends when the sandbox's claim is gone (checked every second) or on
 * SIGTERM (podman-runtime.ts `remove` sends it and waits, so the ports are free when rm returns).
 */
import {existsSync, promises as fs, readFileSync} from 'node:fs'
import net from 'node:net'
import path from 'node:path'

import type {BackendContext} from '../../sdk/target.js'

import {OperationError} from '../../sdk/errors.js'
import {isAlive} from '../../sdk/lock.js'
import {processStart} from '../../sdk/process-group.js'
import {readClaim} from './claims.js'

/**
 * How long a connection waits for the pod's port, in ms: a stopped pod's address answers nothing,
 * and a client should get a reset rather than hang.
 */
const CONNECT_TIMEOUT_MS = 3000

/** `<state dir>/sandboxes/<project>.relay`: the relay's pid, once it listens. */
export const relayFile = (stateDir: string, project: string) => path.join(stateDir, 'sandboxes', `${project}.relay`)

/** The address of pod `pod` on its podman network (its infra container's), or undefined. */
export async function podAddress(context: BackendContext, pod: string): Promise<string | undefined> {
  const infra = await context.runner.run('podman', ['pod', 'inspect', pod, '--format', '{{.InfraContainerID}}'], {
    allowFailure: true,
  })
  if (infra.exitCode !== 0 || infra.stdout.trim() === '') return undefined
  const address = await context.runner.run(
    'podman',
    [
      'container',
      'inspect',
      infra.stdout.trim(),
      '--format',
      '{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}',
    ],
    {allowFailure: true},
  )
  return address.stdout
    .trim()
    .split(/\s+/)
    .find((entry) => net.isIPv4(entry) || net.isIPv6(entry))
}

/**
 * Relays host port → `address:containerPort` for every forward until the claim of `project` is
 * gone or SIGTERM; resolves then.
 * @throws OperationError when a host port cannot be listened on.
 */
export async function relayPorts(
  stateDir: string,
  project: string,
  address: string,
  forwards: Array<{hostPort: number; containerPort: number}>,
): Promise<void> {
  const sockets = new Set<net.Socket>()
  const servers = forwards.map(({containerPort}) =>
    net.createServer((client) => {
      const upstream = net.connect({port: containerPort, host: address, timeout: CONNECT_TIMEOUT_MS})
      let connected = false
      upstream.once('connect', () => {
        connected = true
        upstream.setTimeout(0)
      })
      upstream.once('timeout', () => upstream.destroy())
      sockets.add(client).add(upstream)
      const close = () => {
        // Nothing listens in the pod (or the pod is gone): reset the client, as the refused
        // connection a published port gives, rather than accept and close (an "empty reply").
        if (!connected && !client.destroyed) client.resetAndDestroy()
        else client.destroy()
        upstream.destroy()
        sockets.delete(client)
        sockets.delete(upstream)
      }

      client.on('error', close).on('close', close)
      upstream.on('error', close).on('close', close)
      client.pipe(upstream)
      upstream.pipe(client)
    }),
  )
  try {
    await Promise.all(
      servers.map(
        async (server, index) =>
          new Promise<void>((resolve, reject) => {
            server.once('error', reject)
            // IPv4's every address, as podman (netavark) publishes a port by default.
            server.listen(forwards[index].hostPort, '0.0.0.0', () => resolve())
          }),
      ),
    )
  } catch (error) {
    for (const server of servers) server.close()
    throw new OperationError(`the port relay of sandbox pod ${project} could not listen`, {
      why: (error as Error).message,
      fix: 'free the host port, then run yard sandbox create again',
    })
  }

  await fs.writeFile(
    relayFile(stateDir, project),
    JSON.stringify({pid: process.pid, started: processStart(process.pid)}) + '\n',
  )
  await new Promise<void>((resolve) => {
    const stop = () => {
      clearInterval(timer)
      process.off('SIGTERM', stop)
      for (const server of servers) server.close()
      for (const socket of sockets) socket.destroy()
      resolve()
    }

    const timer = setInterval(() => {
      if (readClaim(stateDir, project) === undefined) stop()
    }, 1000)
    process.once('SIGTERM', stop)
  })
  await fs.rm(relayFile(stateDir, project), {force: true})
}

/** Waits up to `ms` for the relay of `project` to listen. @throws OperationError when it does not. */
export async function awaitRelay(stateDir: string, project: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!existsSync(relayFile(stateDir, project))) {
    if (Date.now() > deadline)
      throw new OperationError(`the port relay of sandbox pod ${project} did not start within ${ms / 1000} s`, {
        fix: 'check that yard runs (yard doctor), then run yard sandbox create again',
      })
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Ends the relay of `project` (SIGTERM) and waits up to 5 s for it to go, so its ports are free. */
export async function stopRelay(stateDir: string, project: string): Promise<void> {
  const file = relayFile(stateDir, project)
  let relay: {pid?: number; started?: string} = {}
  try {
    relay = JSON.parse(readFileSync(file, 'utf8')) as typeof relay
  } catch {
    // No relay (a sandbox without ports), or a torn file: nothing to end.
  }

  const pid = relay.pid ?? 0
  // The start time tells a recycled pid (a relay killed hard, its file left) from the relay.
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid) && processStart(pid) === relay.started) {
    try {
      process.kill(pid, 'SIGTERM')
    } catch {
      // Gone between the check and the signal.
    }

    const deadline = Date.now() + 5000
    while (isAlive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  }

  await fs.rm(file, {force: true})
}
