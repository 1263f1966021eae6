/**
 * The host side of fetch-through (sdk/fetch-through.ts), with the real git-cache backend on a
 * local upstream: every ask pending at once is answered by one fetch, fetches of one cache start
 * at least FETCH_THROUGH_GAP_MS apart, a failed fetch answers with the stale note, and files that
 * are not asks are left alone. The pod's side runs in test/plugins/k8s-sandbox/fetch-through.test.ts.
 */
import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {existsSync, lstatSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import type {SandboxRecord} from '../../src/sdk/sandbox.js'

import {asksRoot, FETCH_THROUGH_GAP_MS, serveAskDirs, serveAsks} from '../../src/sdk/fetch-through.js'
import {commitTo, harness, makeUpstream} from '../plugins/git-cache/support.js'
import {cleanupTemp, tempDir} from '../support/repo.js'

async function answered(file: string, withinMs = 10_000): Promise<string> {
  const until = Date.now() + withinMs
  while (!existsSync(file)) {
    if (Date.now() > until) throw new Error(`no answer ${file}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }

  return readFileSync(file, 'utf8')
}

describe("fetch-through: the host serves a sandbox's asks", function () {
  this.timeout(30_000)

  after(() => cleanupTemp())

  it('answers pending asks with one fetch, spaces fetches of a cache, answers a failure with the stale note', async () => {
    const upstream = makeUpstream('app')
    const fetchStarts: number[] = []
    const node = harness({onSpawn: (argv) => argv.includes('fetch') && fetchStarts.push(Date.now())})
    const added = await node.cache.add(node.root, upstream)
    const state = tempDir('yard-state')
    const project = 'yardtest-ft-x'
    const dir = path.join(asksRoot(state, project), added.key)
    mkdirSync(dir, {recursive: true})
    const sandbox = {project, spec: {repos: [{slot: 'app', key: added.key, url: upstream}]}} as unknown as SandboxRecord
    const stop = new AbortController()
    const serving = serveAsks(state, sandbox, {cache: node.cache, root: node.root}, stop.signal)
    try {
      const later = commitTo(upstream, 'main', 'later', 'after the cache was made\n')
      writeFileSync(path.join(dir, 'not-an-ask'), '')
      for (const id of ['1.1', '1.2', '1.3']) writeFileSync(path.join(dir, `${id}.ask`), '')
      for (const id of ['1.1', '1.2', '1.3']) expect(await answered(path.join(dir, `${id}.answer`))).to.equal('')
      expect(fetchStarts).to.have.length(1)
      const cached = (await node.cache.list(node.root)).find((row) => row.key === added.key)
      expect(cached?.stale).to.equal(false)
      expect(
        execFileSync('git', ['-C', added.path, 'rev-parse', 'refs/heads/main'], {encoding: 'utf8'}).trim(),
      ).to.equal(later)

      // Asked again at once: served, but not before the gap since the last fetch started.
      renameSync(upstream, `${upstream}.away`)
      writeFileSync(path.join(dir, '2.1.ask'), '')
      const note = await answered(path.join(dir, '2.1.answer'))
      expect(fetchStarts).to.have.length(2)
      // Measured at git's spawn, which trails the fetch's start by a few ms to a few hundred.
      expect(fetchStarts[1] - fetchStarts[0]).to.be.at.least(FETCH_THROUGH_GAP_MS - 300)
      expect(note).to.match(new RegExp(String.raw`^the cache ${added.key} is stale since \S+ \(\d+s ago\): .+\n$`))
      expect(existsSync(path.join(dir, 'not-an-ask'))).to.equal(true)
    } finally {
      stop.abort()
      await serving
    }
  })

  it('opens a side given as a function on the first ask only; one that cannot be opened answers with a note', async () => {
    const state = tempDir('yard-state')
    const project = 'yardtest-ft-lazy'
    const key = 'app-1a2b3c4d'
    const dir = path.join(asksRoot(state, project), key)
    mkdirSync(dir, {recursive: true})
    const sandbox = {
      project,
      spec: {repos: [{slot: 'app', key, url: 'https://git.example.com/app.git'}]},
    } as unknown as SandboxRecord
    let opened = 0
    const stop = new AbortController()
    const serving = serveAsks(
      state,
      sandbox,
      async () => {
        opened++
        throw new Error('no cache backend "nope" is registered')
      },
      stop.signal,
    )
    try {
      await new Promise((resolve) => setTimeout(resolve, 400))
      expect(opened, 'not before an ask').to.equal(0)
      writeFileSync(path.join(dir, '1.1.ask'), '')
      expect(await answered(path.join(dir, '1.1.answer'))).to.equal(
        `the cache ${key} could not be fetched: no cache backend "nope" is registered\n`,
      )
      expect(opened).to.equal(1)
    } finally {
      stop.abort()
      await serving
    }
  })

  it('answers the asks of one cache in several directories (pods on one node) with one fetch', async () => {
    const dirs = ['pod-a', 'pod-b'].map((pod) => path.join(tempDir('yard-asks'), pod, 'app-1a2b3c4d'))
    for (const dir of dirs) mkdirSync(dir, {recursive: true})
    const fetched: string[] = []
    const stop = new AbortController()
    const serving = serveAskDirs(
      () => dirs.map((dir) => ({key: 'app-1a2b3c4d', url: 'https://git.example.com/app.git', dir})),
      async (key, url) => {
        fetched.push(`${key} ${url}`)
        return ''
      },
      stop.signal,
    )
    try {
      for (const dir of dirs) writeFileSync(path.join(dir, '1.1.ask'), '')
      for (const dir of dirs) expect(await answered(path.join(dir, '1.1.answer'))).to.equal('')
      expect(fetched).to.deep.equal(['app-1a2b3c4d https://git.example.com/app.git'])
    } finally {
      stop.abort()
      await serving
    }
  })

  it('never writes through a link the pod put where the answer goes', async () => {
    const upstream = makeUpstream('app')
    const node = harness()
    const added = await node.cache.add(node.root, upstream)
    renameSync(upstream, `${upstream}.away`)
    const state = tempDir('yard-state')
    const project = 'yardtest-ft-link'
    const dir = path.join(asksRoot(state, project), added.key)
    mkdirSync(dir, {recursive: true})
    const victim = path.join(tempDir('yard-host'), 'precious')
    writeFileSync(victim, "the host user's file\n")
    // The pod owns the directory: it may plant links to whatever path it guesses on the host.
    symlinkSync(victim, path.join(dir, '1.1.answer.tmp'))
    const sandbox = {project, spec: {repos: [{slot: 'app', key: added.key, url: upstream}]}} as unknown as SandboxRecord
    const stop = new AbortController()
    const serving = serveAsks(state, sandbox, {cache: node.cache, root: node.root}, stop.signal)
    try {
      writeFileSync(path.join(dir, '1.1.ask'), '')
      expect(await answered(path.join(dir, '1.1.answer'))).to.match(new RegExp(`^the cache ${added.key} is stale`))
      expect(readFileSync(victim, 'utf8')).to.equal("the host user's file\n")
      expect(lstatSync(path.join(dir, '1.1.answer')).isSymbolicLink()).to.equal(false)
    } finally {
      stop.abort()
      await serving
    }
  })
})
