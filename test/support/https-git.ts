import type {AddressInfo} from 'node:net'

/**
 * A private git host on this machine for tests (DESIGN.md §8): git's own smart HTTP server,
 * `git http-backend` (a CGI program, git-http-backend(1)), behind a small Node https server with a
 * self-signed certificate made with openssl at start and HTTP basic auth. Every repository under
 * `root` is served at `https://127.0.0.1:PORT/<name>`; a request without the right user and
 * password gets 401, so git must find credentials itself. Clients trust the certificate through
 * `GIT_SSL_CAINFO` (the `caFile`).
 */
import {execFileSync, spawn} from 'node:child_process'
import {readFileSync} from 'node:fs'
import https from 'node:https'
import path from 'node:path'

import {tempDir} from './repo.js'

export interface HttpsGit {
  /** `https://127.0.0.1:PORT` (no trailing slash). */
  url: string
  /** The certificate to trust (PEM). */
  caFile: string
  /** Per request: method, path, and the user it authenticated as (null: refused). */
  requests: Array<{method: string; path: string; user: string | null}>
  close(): Promise<void>
}

const BACKEND = execFileSync('git', ['--exec-path'], {encoding: 'utf8'}).trim() + '/git-http-backend'

/** Starts the server on 127.0.0.1 and a free port. */
export async function startHttpsGit(options: {root: string; user: string; password: string}): Promise<HttpsGit> {
  const dir = tempDir('yard-https-git')
  const keyFile = path.join(dir, 'key.pem')
  const caFile = path.join(dir, 'cert.pem')
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      caFile,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    {stdio: 'ignore'},
  )
  const expected = `Basic ${Buffer.from(`${options.user}:${options.password}`).toString('base64')}`
  const requests: HttpsGit['requests'] = []

  const server = https.createServer({key: readFileSync(keyFile), cert: readFileSync(caFile)}, (request, response) => {
    const url = new URL(request.url ?? '/', 'https://127.0.0.1')
    const authorized = request.headers.authorization === expected
    requests.push({method: request.method ?? 'GET', path: url.pathname, user: authorized ? options.user : null})
    if (!authorized) {
      response.writeHead(401, {'WWW-Authenticate': 'Basic realm="yard test git"', 'Content-Type': 'text/plain'})
      response.end('authentication required\n')
      return
    }

    const cgi = spawn(BACKEND, [], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: options.root,
        GIT_HTTP_EXPORT_ALL: '1',
        REQUEST_METHOD: request.method ?? 'GET',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: request.headers['content-type'] ?? '',
        REMOTE_USER: options.user,
        REMOTE_ADDR: '127.0.0.1',
        ...(request.headers['content-encoding'] && {
          HTTP_CONTENT_ENCODING: String(request.headers['content-encoding']),
        }),
        ...(request.headers['git-protocol'] && {GIT_PROTOCOL: String(request.headers['git-protocol'])}),
      },
      stdio: ['pipe', 'pipe', 'inherit'],
    })
    request.pipe(cgi.stdin)
    let head = Buffer.alloc(0)
    let headed = false
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headed) {
        response.write(chunk)
        return
      }

      head = Buffer.concat([head, chunk])
      const end = head.indexOf('\r\n\r\n')
      if (end === -1) return
      headed = true
      let status = 200
      const headers: Record<string, string> = {}
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':')
        const name = line.slice(0, colon).trim()
        const value = line.slice(colon + 1).trim()
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10)
        else headers[name] = value
      }

      response.writeHead(status, headers)
      response.write(head.subarray(end + 4))
    })
    cgi.on('close', () => response.end())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    caFile,
    requests,
    async close() {
      server.closeAllConnections()
      return new Promise((resolve) => server.close(() => resolve()))
    },
  }
}
