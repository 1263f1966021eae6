/**
 * Warm pools on the podman runtime (docs/sandboxes.md, "Warm pool"): pool set/list/rm, a claim
 * that gives a ready pod the identity a cold create gives (DESIGN.md §3.4, §5.2), the `warm`
 * marker, the refill in the background, dead pool pods detected, and bad input refused with
 * nothing changed.
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'

import type {PoolRow} from '../../../src/core/sandbox/pool.js'
import type {CacheStatus} from '../../../src/sdk/cache.js'

import {builtCli} from '../../support/built-cli.js'
import {ensureDefaultImage, podman, podmanTry, sweep} from '../../support/podman.js'
import {addWorktree, cleanupTemp, git} from '../../support/repo.js'
import {yard} from '../../support/yard.js'
import {cli, cliAsync, makeApp, makeUpstream, podExists, SANDBOX_TEST_PREFIX, type SandboxFixture} from './support.js'

const prefix = `${SANDBOX_TEST_PREFIX}w`

interface ListRow {
  name: string
  project: string
  offset: number
  start: string
  repos: Array<{lastFetched: string | null}>
}

const poolPods = (id: string) =>
  podmanTry('pod', 'ps', '--filter', `label=yard.dev/pool=${id}`, '--format', '{{.Name}}')
    .stdout.split('\n')
    .filter(Boolean)
    .sort()

describe('warm pools of sandbox pods (podman)', function () {
  this.timeout(120_000)
  let fixture: SandboxFixture
  let upstream: string
  let poolId: string
  const run = async (args: string[]) => yard(args, {cwd: fixture.app, env: fixture.env})
  const pools = async () => (await run(['sandbox', 'pool', 'list', '--json'])).json as PoolRow[]

  /** Waits until the pool has `size` ready pods (the detached refill makes them). */
  async function untilReady(size: number): Promise<PoolRow> {
    const deadline = Date.now() + 60_000
    for (;;) {
      const row = (await pools()).find((pool) => pool.id === poolId)!
      if (row.ready === size && row.pods.length === size) return row
      if (Date.now() > deadline) throw new Error(`pool ${poolId} never got ${size} ready pods: ${JSON.stringify(row)}`)
      await new Promise((resolve) => setTimeout(resolve, 300))
    }
  }

  /** What a sandbox looks like from outside: list row (no freshness time, no start), ports, git inside, leases. */
  async function observe(name: string) {
    const listed = ((await run(['sandbox', 'list', '--json'])).json as ListRow[]).find((row) => row.name === name)!
    const {start, ...row} = listed
    const ports = (await run(['ports', '--sandbox', name, '--json'])).json
    const inside = cli(fixture, [
      'exec',
      `${name}/wt/${name}`,
      '--',
      'sh',
      '-c',
      'git rev-parse --abbrev-ref HEAD && git log -1 --format=%s && git remote get-url --push origin && git config user.email && pwd',
    ]).stdout.trim()
    const borrowers = ((await run(['cache', 'list', '--json'])).json as CacheStatus[])[0].borrowers
      .map((borrower) => `${borrower.kind} ${borrower.name}`)
      .filter((borrower) => !borrower.startsWith('pool '))
    return {
      start,
      row: {...row, repos: row.repos.map((repo) => ({...repo, lastFetched: null}))},
      ports,
      inside,
      borrowers,
    }
  }

  before(async () => {
    sweep(SANDBOX_TEST_PREFIX)
    await ensureDefaultImage()
    upstream = makeUpstream('app')
    // No [ports]: a running podman pod cannot publish ports (such a sandbox is made cold).
    fixture = makeApp(prefix, '')
  })

  after(() => {
    sweep(SANDBOX_TEST_PREFIX)
    cleanupTemp()
  })

  it('refuses bad input with exit 2 and changes nothing: size, runtime, a repository not cached, #REF, a fill of no pool id', async () => {
    const cases: Array<[string[], string]> = [
      [['--size', '0'], 'invalid --size "0"'],
      [['--size=-1'], 'invalid --size "-1"'],
      [['--size', '1.5'], 'invalid --size "1.5"'],
      [['--size', 'two'], 'invalid --size "two"'],
      [['--size', '2', '--runtime', 'nope'], 'unknown sandbox runtime "nope"'],
      // A pool on a cluster is made by its nodes, which cannot fetch a path on this machine.
      [['--size', '2', '--runtime', 'kubernetes'], 'cannot be fetched by the cluster'],
    ]
    for (const [flags, message] of cases) {
      const refused = await run(['sandbox', 'pool', 'set', '--repo', upstream, ...flags])
      expect(refused.exitCode, `${flags.join(' ')}: ${refused.stderr}`).to.equal(2)
      expect(refused.stderr).to.include(message)
    }

    // The id becomes a file name under the state directory: only a pool id's 12 hex pass.
    for (const id of ['../x', 'nonexist', 'ABCDEF012345', '0123456789ab0']) {
      const refused = await run(['sandbox', 'pool', 'fill', id])
      expect(refused.exitCode, `fill ${id}: ${refused.stderr}`).to.equal(2)
      expect(refused.stderr).to.include(`invalid pool id "${id}"`)
    }

    expect(existsSync(path.join(fixture.state, 'x.lock'))).to.equal(false)
    const notCached = await run(['sandbox', 'pool', 'set', '--repo', upstream, '--size', '2'])
    expect(notCached.exitCode, notCached.stderr).to.equal(2)
    expect(notCached.stderr).to.include('is not in the cache').and.include('yard cache add')
    expect((await run(['cache', 'add', upstream])).exitCode).to.equal(0)
    const withRef = await run(['sandbox', 'pool', 'set', '--repo', `${upstream}#main`, '--size', '2'])
    expect(withRef.exitCode, withRef.stderr).to.equal(2)
    expect(withRef.stderr).to.include('a pool takes no #REF')
    expect(await pools()).to.deep.equal([])
    expect(
      existsSync(path.join(fixture.state, 'pools')) ? readdirSync(path.join(fixture.state, 'pools')) : [],
    ).to.deep.equal([])
    expect(
      podmanTry('pod', 'ps', '--filter', 'label=yard.dev/pool', '--format', '{{.Name}}')
        .stdout.split('\n')
        .filter((name) => name.startsWith(prefix)),
    ).to.deep.equal([])
  })

  it('pool set returns at once and fills the pool in the background; pool list shows it', async () => {
    const started = Date.now()
    const set = await run(['sandbox', 'pool', 'set', '--repo', upstream, '--size', '2', '--json'])
    expect(set.exitCode, set.stderr).to.equal(0)
    expect(Date.now() - started).to.be.below(10_000)
    poolId = (set.json as {id: string}).id
    const row = await untilReady(2)
    expect(row).to.deep.include({id: poolId, runtime: 'podman', size: 2, ready: 2})
    expect(row.repos.map((repo) => repo.slot)).to.deep.equal(['app'])
    expect(poolPods(poolId)).to.have.length(2)
    for (const pod of poolPods(poolId)) {
      expect(pod.startsWith(`${prefix}.pool-${poolId}-`)).to.equal(true)
      // default/ cloned and checked out; no identity, no published port.
      expect(
        podman('exec', `${pod}-workspace`, 'git', '-C', '/work/app/default', 'rev-parse', '--abbrev-ref', 'HEAD'),
      ).to.equal('main')
      expect(podman('pod', 'inspect', pod, '--format', '{{.Labels}}'))
        .not.to.include('yard.dev/name')
        .and.not.to.include('yard.dev/offset')
    }

    // Pool pods are no sandboxes.
    expect((await run(['sandbox', 'list', '--json'])).json).to.deep.equal([])
  })

  let warm: Awaited<ReturnType<typeof observe>>

  it("create claims a ready pod: NAME's project, offset and branch, marked warm; the pool refills", async () => {
    const before = poolPods(poolId)
    // The built CLI, which starts `sandbox create` without oclif (src/cli/fast-create.ts): the
    // path an agent's create takes is the one tested on a real pod.
    const built = builtCli(['sandbox', 'create', 'feat', '--repo', upstream, '--json'], {
      cwd: fixture.app,
      env: fixture.env,
    })
    expect(built.status, built.stderr).to.equal(0)
    expect(built.oclif).to.equal(false)
    const created = {json: JSON.parse(built.stdout) as unknown}
    expect(created.json).to.deep.include({
      name: 'feat',
      project: `${prefix}-feat`,
      offset: 59,
      offsetSource: 'hash',
      start: 'warm',
    })
    // The claimed pod left the pool; no pod of the sandbox's own name was made.
    expect(podExists(`${prefix}-feat`)).to.equal(false)
    expect(poolPods(poolId).filter((pod) => !before.includes(pod))).to.deep.equal([])
    warm = await observe('feat')
    expect(warm.start).to.equal('warm')
    expect(warm.row).to.deep.include({name: 'feat', project: `${prefix}-feat`, offset: 59})
    expect(warm.inside.split('\n')).to.deep.equal([
      'wt/feat',
      'second',
      upstream,
      'sandbox@example.com',
      '/work/app/wt-feat',
    ])
    expect(warm.borrowers).to.deep.equal([`sandbox ${prefix}-feat`])
    const free = new Set((await pools())[0].pods.map((pod) => pod.name))
    const claimed = before.filter((pod) => !free.has(pod))
    expect(claimed).to.have.length(1)
    const row = await untilReady(2)
    expect(row.pods.map((pod) => pod.name)).not.to.include(claimed[0])

    // A second create of the name reads the caches while the runtime is asked whether it exists;
    // it is refused all the same, and takes no pool pod and no lease.
    const ready = poolPods(poolId)
    const again = builtCli(['sandbox', 'create', 'feat', '--repo', upstream], {cwd: fixture.app, env: fixture.env})
    expect(again.status, again.stderr).to.equal(2)
    expect(again.stderr).to.include(`the sandbox feat exists (pod ${prefix}-feat)`)
    expect(poolPods(poolId)).to.deep.equal(ready)
    expect((await pools())[0].ready).to.equal(2)
    expect((await observe('feat')).borrowers).to.deep.equal([`sandbox ${prefix}-feat`])
  })

  it('a claimed sandbox is removed like a cold one, and a cold create of the same name is indistinguishable but for the marker', async () => {
    const removed = await run(['sandbox', 'rm', 'feat'])
    expect(removed.exitCode, removed.stderr).to.equal(0)
    expect((await run(['sandbox', 'list', '--json'])).json).to.deep.equal([])
    expect(readdirSync(path.join(fixture.state, 'sandboxes')).filter((entry) => entry.includes('feat'))).to.deep.equal(
      [],
    )
    // Cold: the pool's pods all stopped, so none is claimable (dead pods are detected, not claimed).
    for (const pod of poolPods(poolId)) podman('pod', 'stop', '--time', '0', pod)
    const created = await run(['sandbox', 'create', 'feat', '--repo', upstream, '--json'])
    expect(created.exitCode, created.stderr).to.equal(0)
    expect(created.stderr).to.include(`note: pool ${poolId} has no ready pod; creating cold`)
    expect((created.json as {start: string}).start).to.equal('cold')
    expect(podExists(`${prefix}-feat`)).to.equal(true)
    const cold = await observe('feat')
    expect(cold.start).to.equal('cold')
    expect({row: cold.row, ports: cold.ports, inside: cold.inside, borrowers: cold.borrowers}).to.deep.equal({
      row: warm.row,
      ports: warm.ports,
      inside: warm.inside,
      borrowers: warm.borrowers,
    })
    // The refill that cold create started replaced the dead pods.
    const row = await untilReady(2)
    expect(row.pods.every((pod) => pod.phase === 'Running')).to.equal(true)
    expect((await run(['sandbox', 'rm', 'feat'])).exitCode).to.equal(0)
  })

  it('three creates racing for two ready pods: two claim one each, never the same, the third is cold', async () => {
    await untilReady(2)
    const names = ['ra', 'rb', 'rc']
    const created = await Promise.all(
      names.map(async (name) => cliAsync(fixture, ['sandbox', 'create', name, '--repo', upstream, '--json'])),
    )
    for (const result of created) expect(result.status, result.stderr).to.equal(0)
    const starts = created.map((result) => (JSON.parse(result.stdout) as {start: string}).start)
    expect([...starts].sort()).to.deep.equal(['cold', 'warm', 'warm'])
    const claimed = names
      .filter((_, index) => starts[index] === 'warm')
      .map(
        (name) =>
          (
            JSON.parse(readFileSync(path.join(fixture.state, 'sandboxes', `${prefix}-${name}.claim.json`), 'utf8')) as {
              pod: string
            }
          ).pod,
      )
    expect(new Set(claimed).size).to.equal(2)
    // Each sandbox is its own: its branch, in its own pod.
    for (const name of names)
      expect(
        cli(fixture, ['exec', `${name}/wt/${name}`, '--', 'git', 'rev-parse', '--abbrev-ref', 'HEAD']).stdout.trim(),
      ).to.equal(`wt/${name}`)
    for (const name of names) expect((await run(['sandbox', 'rm', name])).exitCode).to.equal(0)
    await untilReady(2)
  })

  it("a commit pushed after the pool was prepared: the claim's branch starts at it, the pod's files are its", async () => {
    await untilReady(2)
    const seed = path.join(path.dirname(upstream), 'seed')
    writeFileSync(path.join(seed, 'moved.txt'), 'moved\n')
    git(seed, 'add', 'moved.txt')
    git(seed, 'commit', '-q', '-m', 'moved')
    git(seed, 'push', '-q', 'origin', 'main')
    const created = await run(['sandbox', 'create', 'moved', '--repo', upstream, '--json'])
    expect(created.exitCode, created.stderr).to.equal(0)
    expect((created.json as {start: string}).start).to.equal('warm')
    const inside = cli(fixture, [
      'exec',
      'moved/wt/moved',
      '--',
      'sh',
      '-c',
      'git log -1 --format=%s && cat moved.txt && git status --porcelain && git rev-parse --abbrev-ref HEAD',
    ])
    expect(inside.status, inside.stderr).to.equal(0)
    expect(inside.stdout.trim().split('\n')).to.deep.equal(['moved', 'moved', 'wt/moved'])
    expect((await run(['sandbox', 'rm', 'moved'])).exitCode).to.equal(0)
  })

  it('a claim that fails after the branch was attached in the taken pod removes that pod; the pool gets only clean pods', async () => {
    const before = (await untilReady(2)).pods.map((pod) => pod.name)
    // The claim record cannot be written (a directory where its draft goes): the claim fails under the lock.
    const draft = path.join(fixture.state, 'sandboxes', `${prefix}-bad.claim.json.tmp`)
    mkdirSync(draft, {recursive: true})
    try {
      const failed = await run(['sandbox', 'create', 'bad', '--repo', upstream])
      expect(failed.exitCode).to.not.equal(0)
    } finally {
      rmSync(draft, {recursive: true, force: true})
    }

    expect((await run(['sandbox', 'list', '--json'])).json).to.deep.equal([])
    const {borrowers} = ((await run(['cache', 'list', '--json'])).json as CacheStatus[])[0]
    expect(borrowers.map((borrower) => borrower.name)).not.to.include(`${prefix}-bad`)
    // The pod it took is gone, not back in the pool with the branch checked out; the refill replaces it.
    const after = (await untilReady(2)).pods.map((pod) => pod.name)
    expect(before.filter((pod) => !after.includes(pod))).to.have.length(1)
    for (const pod of after)
      expect(podmanTry('exec', `${pod}-workspace`, 'test', '-e', '/work/app/wt-bad').status, pod).to.not.equal(0)
  })

  it('a pod taken by a create that died before its claim is listed as orphaned and removed by the refill, one whose create runs is kept', async () => {
    const [dead, running] = (await untilReady(2)).pods.map((pod) => pod.name)
    const sandboxes = path.join(fixture.state, 'sandboxes')
    // What a SIGKILLed create leaves: ready marker gone, taken marker naming its project, no claim record, no lock.
    rmSync(path.join(sandboxes, 'ready', dead))
    mkdirSync(path.join(sandboxes, 'claimed'), {recursive: true})
    writeFileSync(path.join(sandboxes, 'claimed', dead), `${prefix}-ghost\n`)
    // A create still running holds its lock (this process, alive): its pod is not an orphan.
    rmSync(path.join(sandboxes, 'ready', running))
    writeFileSync(path.join(sandboxes, 'claimed', running), `${prefix}-busy\n`)
    const lock = path.join(fixture.state, 'locks', `sandbox-${prefix}-busy.lock`)
    mkdirSync(path.dirname(lock), {recursive: true})
    writeFileSync(
      lock,
      JSON.stringify({pid: process.pid, host: os.hostname(), started: new Date().toISOString()}) + '\n',
    )
    // A ready marker of a pod removed outside yard.
    const gone = `${prefix}.pool-${poolId}-0badc0`
    writeFileSync(path.join(sandboxes, 'ready', gone), '')
    try {
      const row = (await pools()).find((pool) => pool.id === poolId)!
      expect(row.ready).to.equal(0)
      expect(row.pods).to.deep.include({name: dead, phase: 'orphaned', ready: false})
      expect(row.pods.map((pod) => pod.name)).not.to.include(running)
      const fill = await run(['sandbox', 'pool', 'fill', poolId])
      expect(fill.exitCode, fill.stderr).to.equal(0)
      expect(poolPods(poolId)).not.to.include(dead)
      expect(poolPods(poolId)).to.include(running)
      expect(existsSync(path.join(sandboxes, 'claimed', dead))).to.equal(false)
      expect(existsSync(path.join(sandboxes, 'ready', gone))).to.equal(false)
      expect((await untilReady(2)).pods.map((pod) => pod.name)).not.to.include(dead)
    } finally {
      rmSync(lock, {force: true})
    }

    // Its create gone too now: pool rm (in the next test) or the refill removes it.
    const after = (await pools()).find((pool) => pool.id === poolId)!
    expect(after.pods).to.deep.include({name: running, phase: 'orphaned', ready: false})
    expect((await run(['sandbox', 'pool', 'fill', poolId])).exitCode).to.equal(0)
    expect(poolPods(poolId)).not.to.include(running)
    await untilReady(2)
  })

  it('pool rm removes the unclaimed pods and the leases; a sandbox claimed from it stays', async () => {
    expect((await run(['sandbox', 'create', 'kept', '--repo', upstream])).exitCode).to.equal(0)
    const dry = await run(['sandbox', 'pool', 'rm', poolId, '--dry-run', '--json'])
    expect(dry.exitCode, dry.stderr).to.equal(0)
    expect(poolPods(poolId).length).to.be.greaterThan(0)
    const removed = await run(['sandbox', 'pool', 'rm', '--repo', upstream, '--json'])
    expect(removed.exitCode, removed.stderr).to.equal(0)
    expect((removed.json as {id: string}).id).to.equal(poolId)
    // Only the claimed pod is left of the pool's: a sandbox now.
    expect(poolPods(poolId)).to.have.length(1)
    expect(await pools()).to.deep.equal([])
    const listed = (await run(['sandbox', 'list', '--json'])).json as ListRow[]
    expect(listed.map((row) => [row.name, row.start])).to.deep.equal([['kept', 'warm']])
    const borrowers = ((await run(['cache', 'list', '--json'])).json as CacheStatus[])[0].borrowers.map(
      (borrower) => `${borrower.kind} ${borrower.name}`,
    )
    expect(borrowers).to.deep.equal([`sandbox ${prefix}-kept`])
    expect(cli(fixture, ['exec', 'kept/wt/kept', '--', 'git', 'status', '--short']).status).to.equal(0)
    expect((await run(['sandbox', 'rm', 'kept'])).exitCode).to.equal(0)
    expect(poolPods(poolId)).to.deep.equal([])
    expect((await run(['sandbox', 'pool', 'rm', poolId])).exitCode).to.equal(2)
  })

  it('a claim record left of a pool pod that is gone is removed: a cold create of the name makes and uses its own pod', async () => {
    // No pool (the last test removed it; alone, this one does): the create is cold.
    await run(['sandbox', 'pool', 'rm', poolId])
    const sandboxes = path.join(fixture.state, 'sandboxes')
    const gone = `${prefix}.pool-${poolId}-dead00`
    const claim = path.join(sandboxes, `${prefix}-lost.claim.json`)
    // What a SIGKILLed `sandbox rm` (or `podman pod rm -f` of the claimed pod) leaves.
    mkdirSync(path.join(sandboxes, 'claimed'), {recursive: true})
    writeFileSync(path.join(sandboxes, 'claimed', gone), `${prefix}-lost\n`)
    writeFileSync(claim, JSON.stringify({pod: gone, pool: poolId, labels: {}, annotations: {}}) + '\n')
    const created = await run(['sandbox', 'create', 'lost', '--repo', upstream, '--json'])
    expect(created.exitCode, created.stderr).to.equal(0)
    expect((created.json as {start: string}).start).to.equal('cold')
    expect(existsSync(claim)).to.equal(false)
    expect(existsSync(path.join(sandboxes, 'claimed', gone))).to.equal(false)
    expect(podExists(`${prefix}-lost`)).to.equal(true)
    const inside = cli(fixture, ['exec', 'lost/wt/lost', '--', 'git', 'rev-parse', '--abbrev-ref', 'HEAD'])
    expect(inside.stdout.trim(), inside.stderr).to.equal('wt/lost')
    expect((await run(['sandbox', 'rm', 'lost'])).exitCode).to.equal(0)
    expect(podExists(`${prefix}-lost`)).to.equal(false)
  })

  it('a pool definition that is no JSON is skipped by list and create with one warning, and pool rm ID deletes it', async () => {
    const set = await run(['sandbox', 'pool', 'set', '--repo', upstream, '--size', '1', '--json'])
    expect(set.exitCode, set.stderr).to.equal(0)
    const {id} = set.json as {id: string}
    expect((await run(['sandbox', 'pool', 'rm', id])).exitCode).to.equal(0)
    const file = path.join(fixture.state, 'pools', `${id}.json`)
    writeFileSync(file, '{"id": "' + id.slice(0, 4))
    const warnings = (text: string) => text.split('\n').filter((line) => line.includes(file))
    const listed = await run(['sandbox', 'pool', 'list', '--json'])
    expect(listed.exitCode, listed.stderr).to.equal(0)
    expect(listed.json).to.deep.equal([])
    expect(warnings(listed.stderr)).to.have.length(1)
    expect(listed.stderr).to.include(`yard sandbox pool rm ${id}`).and.not.include('SyntaxError')
    const created = await run(['sandbox', 'create', 'corrupt', '--repo', upstream, '--json'])
    expect(created.exitCode, created.stderr).to.equal(0)
    expect((created.json as {start: string}).start).to.equal('cold')
    expect(warnings(created.stderr)).to.have.length(1)
    expect((await run(['sandbox', 'rm', 'corrupt'])).exitCode).to.equal(0)
    const removed = await run(['sandbox', 'pool', 'rm', id])
    expect(removed.exitCode, removed.stderr).to.equal(0)
    expect(existsSync(file)).to.equal(false)
  })

  it('--branch of the default branch (checked out in default/) or "@" is refused with exit 2 before any pod is touched, warm or cold', async () => {
    const set = await run(['sandbox', 'pool', 'set', '--repo', upstream, '--size', '1', '--json'])
    expect(set.exitCode, set.stderr).to.equal(0)
    const {id} = set.json as {id: string}
    const deadline = Date.now() + 60_000
    while ((await pools()).every((row) => !(row.id === id && row.ready === 1))) {
      if (Date.now() > deadline) throw new Error(`pool ${id} never got a ready pod`)
      await new Promise((resolve) => setTimeout(resolve, 300))
    }

    const ready = poolPods(id)
    const refused = async (flags: string[]) => {
      const result = await run(['sandbox', 'create', 'b1', '--repo', upstream, ...flags])
      expect(result.exitCode, result.stderr).to.equal(2)
      expect(podExists(`${prefix}-b1`)).to.equal(false)
      return result.stderr
    }

    // Warm: the ready pod stays ready, untaken.
    expect(await refused(['--branch', 'main']))
      .to.include('sandbox b1')
      .and.include('default branch')
    expect(await refused(['--branch=@'])).to.include('invalid branch name "@"')
    expect(poolPods(id)).to.deep.equal(ready)
    expect((await pools()).find((row) => row.id === id)!.ready).to.equal(1)
    expect(existsSync(path.join(fixture.state, 'sandboxes', `${prefix}-b1.claim.json`))).to.equal(false)
    // Cold: no pool.
    expect((await run(['sandbox', 'pool', 'rm', id])).exitCode).to.equal(0)
    expect(await refused(['--branch', 'main']))
      .to.include('sandbox b1')
      .and.include('default branch')
    expect((await run(['sandbox', 'list', '--json'])).json).to.deep.equal([])
  })

  it('credentials in a pool url are stripped from its output and definition; creates of the repository still claim from it', async () => {
    // https://git.test/<path> is the upstream on disk (git's url.insteadOf), as a hosted repository.
    const hosted = {
      ...fixture.env,
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'url./.insteadOf',
      GIT_CONFIG_VALUE_0: 'https://git.test/',
    }
    const url = `https://git.test${upstream}`
    const withSecret = `https://user:s3cr3t@git.test${upstream}`
    const hostedRun = async (args: string[]) => yard(args, {cwd: fixture.app, env: hosted})
    expect((await hostedRun(['cache', 'add', url])).exitCode).to.equal(0)
    const set = await hostedRun(['sandbox', 'pool', 'set', '--repo', withSecret, '--size', '1'])
    const json = await hostedRun(['sandbox', 'pool', 'set', '--repo', withSecret, '--size', '1', '--json'])
    expect(set.exitCode, set.stderr).to.equal(0)
    expect(json.exitCode, json.stderr).to.equal(0)
    const {id} = json.json as {id: string}
    const stored = readFileSync(path.join(fixture.state, 'pools', `${id}.json`), 'utf8')
    for (const text of [set.stdout, set.stderr, json.stdout, json.stderr, stored]) expect(text).not.to.include('s3cr3t')
    expect((json.json as {repos: string[]}).repos).to.deep.equal([url])
    try {
      const deadline = Date.now() + 60_000
      while ((await pools()).every((row) => !(row.id === id && row.ready === 1))) {
        if (Date.now() > deadline) throw new Error(`pool ${id} never got a ready pod`)
        await new Promise((resolve) => setTimeout(resolve, 300))
      }

      const created = await hostedRun(['sandbox', 'create', 'cred', '--repo', url, '--json'])
      expect(created.exitCode, created.stderr).to.equal(0)
      expect((created.json as {start: string}).start).to.equal('warm')
      expect((await hostedRun(['sandbox', 'rm', 'cred'])).exitCode).to.equal(0)
    } finally {
      await hostedRun(['sandbox', 'pool', 'rm', id])
    }
  })
})

describe('warm pools: a claimed sandbox with [ports] answers on the host ports a cold one publishes (rootful podman)', function () {
  this.timeout(90_000)
  const portsPrefix = `${SANDBOX_TEST_PREFIX}v`
  let fixture: SandboxFixture
  let upstream: string
  const run = async (args: string[]) => yard(args, {cwd: fixture.app, env: fixture.env})

  before(async () => {
    sweep(SANDBOX_TEST_PREFIX)
    await ensureDefaultImage()
    upstream = makeUpstream('app')
    fixture = makeApp(portsPrefix, 'WEB_PORT = 39400')
    addWorktree(fixture.app, 'feat')
    expect((await run(['cache', 'add', upstream])).exitCode).to.equal(0)
    expect((await run(['sandbox', 'pool', 'set', '--repo', upstream, '--size', '1'])).exitCode).to.equal(0)
    const deadline = Date.now() + 60_000
    while (((await run(['sandbox', 'pool', 'list', '--json'])).json as PoolRow[])[0].ready < 1) {
      if (Date.now() > deadline) throw new Error('the pool never filled')
      await new Promise((resolve) => setTimeout(resolve, 300))
    }
  })

  after(() => {
    sweep(SANDBOX_TEST_PREFIX)
    cleanupTemp()
  })

  it('a busy host port refuses the claim (exit 3) and leaves the pod in the pool', async () => {
    const holder = net.createServer()
    await new Promise<void>((resolve) => holder.listen(39_459, resolve))
    try {
      const refused = await run(['sandbox', 'create', 'feat', '--repo', upstream])
      expect(refused.exitCode, refused.stderr).to.equal(3)
      expect(refused.stderr).to.include('host port 39459 (WEB_PORT) of sandbox feat is busy')
    } finally {
      holder.close()
    }

    const [pool] = (await run(['sandbox', 'pool', 'list', '--json'])).json as PoolRow[]
    expect(pool.ready).to.equal(1)
    expect((await run(['sandbox', 'list', '--json'])).json).to.deep.equal([])
  })

  it('worktree feat and the claimed sandbox feat share project, offset and port; the port reaches the pod until rm', async () => {
    const created = await run(['sandbox', 'create', 'feat', '--repo', upstream, '--json'])
    expect(created.exitCode, created.stderr).to.equal(0)
    expect((created.json as {start: string}).start).to.equal('warm')
    const worktree = (await run(['ports', '--worktree', 'feat', '--json'])).json as {
      project: string
      offset: number
      ports: Record<string, number>
    }
    const sandbox = (await run(['ports', '--sandbox', 'feat', '--json'])).json as {
      project: string
      offset: number
      ports: Record<string, number>
    }
    const listed = (
      (await run(['sandbox', 'list', '--json'])).json as Array<{
        name: string
        project: string
        offset: number
        ports: Record<string, number>
      }>
    ).find((row) => row.name === 'feat')!
    for (const row of [worktree, sandbox, listed])
      expect({project: row.project, offset: row.offset, ports: row.ports}).to.deep.equal({
        project: `${portsPrefix}-feat`,
        offset: 59,
        ports: {WEB_PORT: 39_459},
      })
    // Nothing listens in the pod yet: the connection is reset, as a cold sandbox's port refuses it.
    const early = await new Promise<string>((resolve) => {
      const socket = net.connect(39_459, '127.0.0.1')
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'))
      socket.once('end', () => resolve('end'))
    })
    expect(early).to.be.oneOf(['ECONNRESET', 'ECONNREFUSED'])
    // git's own daemon on the container port 39400 stands for the sandbox's web server.
    const daemon = cli(fixture, [
      'exec',
      'feat/wt/feat',
      '--',
      'git',
      'daemon',
      '--detach',
      '--reuseaddr',
      '--export-all',
      '--base-path=/work',
      '--port=39400',
    ])
    expect(daemon.status, daemon.stderr).to.equal(0)
    let remote = {status: 1 as number | null, stdout: '', stderr: ''}
    for (let tries = 0; tries < 20 && remote.status !== 0; tries++) {
      remote = spawnSync('git', ['ls-remote', 'git://127.0.0.1:39459/app/default', 'HEAD'], {encoding: 'utf8'})
      if (remote.status !== 0) await new Promise((resolve) => setTimeout(resolve, 200))
    }

    expect(remote.status, remote.stderr).to.equal(0)
    expect(remote.stdout).to.match(/^[0-9a-f]{40}\tHEAD/)
    expect((await run(['sandbox', 'rm', 'feat'])).exitCode).to.equal(0)
    // Free again once rm returns: a cold create of feat could publish it.
    const probe = net.createServer()
    await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(39_459, resolve))
    probe.close()
  })
})
