/**
 * The local cache agent answers the fetch-through asks of this machine's podman sandboxes
 * (ask-fetch.ts; sdk/fetch-through.ts): an ask in `<state dir>/sandboxes/<pod>.asks/<key>/` of
 * a cache it holds is answered with an on-demand fetch, a failure with the stale note; an ask
 * for a cache it does not hold is left for the `yard exec` that serves it; `--once` serves none.
 */
import {expect} from 'chai'
import {existsSync, mkdirSync, readFileSync, renameSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import type {CacheAgentEvent} from '../../../src/sdk/cache.js'

import {asksRoot} from '../../../src/sdk/fetch-through.js'
import {cleanupTemp} from '../../support/repo.js'
import {commitTo, git, harness, makeUpstream} from './support.js'

async function answered(file: string, ms = 10_000): Promise<string> {
  const deadline = Date.now() + ms
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`no answer ${file} after ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }

  return readFileSync(file, 'utf8')
}

describe("git-cache: the local agent answers the podman sandboxes' fetch-through asks", function () {
  this.timeout(30_000)

  afterEach(() => cleanupTemp())

  it("fetches a cache it holds for an ask, answers a failure with the stale note, leaves an unknown cache's ask alone", async () => {
    const h = harness()
    const upstream = makeUpstream('app')
    const {key, path: repo} = await h.cache.add(h.root, upstream)
    // The harness's state directory is the cache root's parent.
    const asks = asksRoot(path.dirname(h.root), 'yardtest-pod')
    const unknown = path.join(asks, 'other-0badc0de')
    for (const dir of [path.join(asks, key), unknown]) mkdirSync(dir, {recursive: true})
    const events: CacheAgentEvent[] = []
    const stop = new AbortController()
    const running = h.cache.agent(h.root, {
      intervalMs: 3_600_000,
      pollMs: 3_600_000,
      once: false,
      signal: stop.signal,
      onEvent: (event) => events.push(event),
    })
    try {
      const later = commitTo(upstream, 'main', 'later', 'pushed after the cache was made\n')
      writeFileSync(path.join(asks, key, '1.1.ask'), '')
      writeFileSync(path.join(unknown, '1.1.ask'), '')
      expect(await answered(path.join(asks, key, '1.1.answer'))).to.equal('')
      expect(git(repo, ['rev-parse', 'refs/heads/main'])).to.equal(later)
      expect(events).to.deep.include({action: 'fetched', key, detail: 'asked by a sandbox (fetch-through)'})

      renameSync(upstream, `${upstream}.away`)
      writeFileSync(path.join(asks, key, '2.1.ask'), '')
      expect(await answered(path.join(asks, key, '2.1.answer'))).to.match(
        new RegExp(String.raw`^the cache ${key} is stale since \S+ \(\d+s ago\): .+\n$`),
      )
      expect(existsSync(path.join(unknown, '1.1.ask'))).to.equal(true)
    } finally {
      stop.abort()
      await running
    }
  })

  it('--once answers no ask', async () => {
    const h = harness()
    const {key} = await h.cache.add(h.root, makeUpstream('app'))
    const dir = path.join(asksRoot(path.dirname(h.root), 'yardtest-pod'), key)
    mkdirSync(dir, {recursive: true})
    writeFileSync(path.join(dir, '1.1.ask'), '')
    await h.cache.agent(h.root, {intervalMs: 3_600_000, once: true})
    expect(existsSync(path.join(dir, '1.1.ask'))).to.equal(true)
    expect(existsSync(path.join(dir, '1.1.answer'))).to.equal(false)
  })
})
