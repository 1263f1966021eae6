/** The remembered compose provider (compose-stack provider.ts): real probes, an hour of memory. */
import {expect} from 'chai'
import {readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {composeProvider, PROVIDER_MEMORY_MS} from '../../../src/plugins/compose-stack/provider.js'
import {ProcessRunner} from '../../../src/sdk/process.js'
import {cleanupTemp, tempDir} from '../../support/repo.js'

describe('compose-stack: the provider is detected once and remembered for an hour', () => {
  after(cleanupTemp)

  it('probes on the first call, not on the next, and again when the memory is stale', async () => {
    const state = tempDir('yard-state')
    const spawned: string[][] = []
    const runner = new ProcessRunner({onSpawn: (argv) => spawned.push(argv)})
    const first = await composeProvider(runner, state, 'auto', 1_000_000)
    expect(first.id).to.equal('podman-compose')
    expect(spawned.some((argv) => argv.join(' ') === 'podman-compose version')).to.equal(true)
    const remembered = JSON.parse(readFileSync(path.join(state, 'compose-provider.json'), 'utf8'))
    expect(remembered).to.deep.include({preference: 'auto', id: 'podman-compose', detectedAt: 1_000_000})

    spawned.length = 0
    const again = await composeProvider(runner, state, 'auto', 1_000_000 + PROVIDER_MEMORY_MS - 1)
    expect(again).to.deep.equal(first)
    expect(spawned).to.deep.equal([])

    await composeProvider(runner, state, 'podman-compose', 1_000_001)
    expect(spawned.length, 'another preference is detected anew').to.be.greaterThan(0)
    spawned.length = 0
    writeFileSync(path.join(state, 'compose-provider.json'), JSON.stringify({...remembered, detectedAt: 0}))
    await composeProvider(runner, state, 'auto', 1_000_000 + PROVIDER_MEMORY_MS)
    expect(spawned.length, 'a stale memory is detected anew').to.be.greaterThan(0)
  })
})
