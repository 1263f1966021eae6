/**
 * The compose resolver (DESIGN.md §4.2) on a 10-service project with two includes, `extends`
 * chains (same file and `file:`), anchors and merge keys, an override file, a `.env` and
 * per-service env files: resolution plus rendering, in this process, against reading and
 * YAML-parsing the same files (the least any reader of them does). Target: ≤ 50 ms added.
 */
import {readFileSync} from 'node:fs'
import {mkdir, writeFile} from 'node:fs/promises'
import {dirname, join} from 'node:path'
import {performance} from 'node:perf_hooks'
import {parseAllDocuments} from 'yaml'

import {renderComposeFile} from '../src/plugins/compose-stack/compose/render.js'
import {resolveComposeProjectSync} from '../src/plugins/compose-stack/compose/resolve.js'
import {readRunConfig, reportBench, type RowResult} from './lib.js'
import {scratchDir} from './stack-fixture.js'

const project = join(await scratchDir('compose-resolve'), 'app')
const files: Record<string, string> = {
  '.env': 'TAG=1.2\nWEB_PORT=8080\nDB_PASSWORD="s3cret # not a comment"\n',
  'compose.yaml': `
x-service: &service
  restart: unless-stopped
  logging: {driver: json-file, options: {max-size: 10m}}
  environment: &env {TZ: UTC, LOG_LEVEL: info}
include:
  - infra/db.yaml
  - path: [infra/queue.yaml, infra/queue.dev.yaml]
    env_file: infra/queue.env
services:
${Array.from(
  {length: 6},
  (_, index) => `  app${index}:
    <<: *service
    extends: {file: common/base.yaml, service: ${index % 2 === 0 ? 'node' : 'python'}}
    build: {context: ./app${index}, args: ["TAG=\${TAG}"]}
    image: app${index}:\${TAG}
    ports: ["\${WEB_PORT:-8080}${index}:80", "127.0.0.1:92${index}9:9229"]
    volumes: ["./app${index}/src:/src", "/node_modules"]
    env_file: [common/app.env]
    environment: {<<: *env, INDEX: "${index}"}
    depends_on: [db, queue]`,
).join('\n')}
`,
  'compose.override.yaml':
    'services:\n  app0:\n    ports: ["9999:9999"]\n    environment: {DEBUG: "1"}\n  app1:\n    command: !override [python, -m, debugpy]\n',
  'common/base.yaml':
    'services:\n  runtime: {labels: [com.example.tier=app], healthcheck: {test: [CMD, "true"], interval: 10s}}\n  node: {extends: runtime, image: node:20, volumes: [./cache:/cache]}\n  python: {extends: runtime, image: python:3.12, working_dir: /src}\n',
  'common/app.env': 'APP_ENV=dev\nAPP_URL=http://localhost:${WEB_PORT}\n',
  'infra/db.yaml':
    'services:\n  db:\n    image: postgres:16\n    environment: {POSTGRES_PASSWORD: "${DB_PASSWORD}"}\n    volumes: [db-data:/var/lib/postgresql/data, ./init:/docker-entrypoint-initdb.d:ro]\n    ports: ["5432:5432"]\n  cache: {image: redis:7, ports: ["6379:6379"]}\nvolumes:\n  db-data: {}\n',
  'infra/queue.yaml':
    'services:\n  queue: {image: "rabbitmq:${RABBIT:-3}", ports: ["5672:5672", "15672:15672"]}\n  worker: {extends: {file: ../common/base.yaml, service: python}, command: [celery]}\n',
  'infra/queue.dev.yaml': 'services:\n  queue: {environment: [RABBITMQ_DEFAULT_USER=dev]}\n',
  'infra/queue.env': 'RABBIT=3.13\n',
}
for (const [name, content] of Object.entries(files)) {
  await mkdir(dirname(join(project, name)), {recursive: true})
  await writeFile(join(project, name), content)
}

const input = {
  checkoutPath: project,
  env: {HOME: '/home/bench', PATH: '/usr/bin'},
  yardEnv: {WEB_PORT: '8059', COMPOSE_PROJECT_NAME: 'app-feat', WORKTREE: 'feat'},
}
const resolve = () => renderComposeFile(resolveComposeProjectSync(input)!.model)

// The first resolution in a process is what one `yard up` pays (cold: JIT, module code unexercised).
const coldStart = performance.now()
const rendered = resolve()
const coldMs = Math.round((performance.now() - coldStart) * 10) / 10
const services = Object.keys(resolveComposeProjectSync(input)!.model.services).length
const read = resolveComposeProjectSync(input)!.files

const {runs, warmup} = readRunConfig()
function time(label: string, work: () => unknown, extra: Partial<RowResult> = {}): RowResult {
  for (let index = 0; index < warmup; index++) work()
  const times: number[] = []
  for (let index = 0; index < runs; index++) {
    const start = performance.now()
    work()
    times.push(performance.now() - start)
  }

  times.sort((a, b) => a - b)
  const pick = (fraction: number) =>
    Math.round(times[Math.min(times.length - 1, Math.floor(fraction * times.length))] * 10) / 10
  return {
    label,
    runs,
    medianMs: pick(0.5),
    minMs: Math.round(times[0] * 10) / 10,
    p90Ms: pick(0.9),
    ratio: null,
    ...extra,
  }
}

const baseline = time(`read + YAML-parse the ${read.length} compose files`, () => {
  for (const file of read) parseAllDocuments(readFileSync(file, 'utf8'))
})
const warm = time(
  `resolve + render (${services} services, ${read.length} files, ${rendered.length} bytes out)`,
  resolve,
  {note: `first run in the process: ${coldMs} ms; target ≤ 50 ms added`},
)
const rows = [baseline, warm].map((row) => ({
  ...row,
  ratio:
    row.medianMs === null || !baseline.medianMs ? null : Math.round((row.medianMs / baseline.medianMs) * 100) / 100,
}))
await reportBench({name: 'compose-resolve', baseline: baseline.label, rows})
