/**
 * Host port probing with a real bind (DESIGN.md §4.2, `up`): a port is free when this process
 * can listen on it on every IPv4 address, as the engine will when it publishes it.
 */
import net from 'node:net'

/**
 * True when `port` can be bound on 0.0.0.0 right now (the socket is closed again at once).
 * Never throws: any bind error (EADDRINUSE, EACCES) counts as busy.
 */
export async function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer()
    server.unref()
    server.once('error', () => resolve(false))
    server.listen({port, host: '0.0.0.0', exclusive: true}, () => server.close(() => resolve(true)))
  })
}

/**
 * The `[ports]` entries whose host port is busy, skipping the ports in `skip` (those this
 * project's own running containers publish, so a second `up` is a no-op). Keys in input order.
 */
export async function busyPorts(
  ports: Record<string, number>,
  skip: ReadonlySet<number>,
): Promise<Array<{key: string; port: number}>> {
  const entries = Object.entries(ports).filter(([, port]) => !skip.has(port))
  const free = await Promise.all(entries.map(async ([, port]) => isPortFree(port)))
  return entries.filter((_, index) => !free[index]).map(([key, port]) => ({key, port}))
}
