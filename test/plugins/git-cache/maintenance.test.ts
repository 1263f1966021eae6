import {expect} from 'chai'
import {existsSync} from 'node:fs'
import path from 'node:path'

import {objectCounts} from '../../../src/plugins/git-cache/layout.js'
import {cleanupTemp} from '../../support/repo.js'
import {harness, type Harness, makeUpstream, missingObjects, writeBlobPack, writeLooseBlob} from './support.js'

const MAINTENANCE = [
  ['git', 'repack', '-a', '-d', '-k'],
  ['git', 'commit-graph', 'write', '--reachable'],
  ['git', 'pack-refs', '--all'],
]

/** Every git call that is gc, prune (or prune-packed, maintenance) or carries a --prune* flag. */
function pruning(argvs: string[][]): string[][] {
  return argvs.filter(
    (argv) =>
      ['gc', 'maintenance', 'prune', 'prune-packed'].includes(argv[1]) ||
      argv.some((word) => word.startsWith('--prune')),
  )
}

const maintenanceCalls = (h: Harness) =>
  h.argvs.filter((argv) => ['commit-graph', 'pack-refs', 'repack'].includes(argv[1]))

describe('git-cache: maintenance thresholds and commands (acceptance 4)', function () {
  this.timeout(60_000)
  let h: Harness
  let upstream: string
  let repo: string

  beforeEach(async () => {
    upstream = makeUpstream()
    h = harness()
    repo = (await h.cache.add(h.root, upstream)).path
    expect(await objectCounts(repo)).to.deep.equal({packs: 1, looseObjects: 0})
  })

  afterEach(() => cleanupTemp())

  it('does not fire after a fetch at 49 packs, fires at 50 with exactly the three commands, and keeps every object', async () => {
    const blobs = Array.from({length: 48}, (_, index) => writeBlobPack(repo, `packed blob ${index}\n`))
    expect(await objectCounts(repo)).to.deep.equal({packs: 49, looseObjects: 0})
    expect((await h.cache.fetch(h.root, upstream)).maintained).to.equal(false)
    expect(maintenanceCalls(h)).to.deep.equal([])

    blobs.push(writeBlobPack(repo, 'the fiftieth pack\n'))
    expect(await objectCounts(repo)).to.deep.equal({packs: 50, looseObjects: 0})
    expect((await h.cache.fetch(h.root, upstream)).maintained).to.equal(true)
    expect(maintenanceCalls(h)).to.deep.equal(MAINTENANCE)
    expect(await objectCounts(repo)).to.deep.equal({packs: 1, looseObjects: 0})
    expect(missingObjects(repo, blobs)).to.deep.equal([])
    expect(existsSync(path.join(repo, 'objects', 'info', 'commit-graph'))).to.equal(true)
    expect(existsSync(path.join(repo, 'packed-refs'))).to.equal(true)
    expect(pruning(h.argvs)).to.deep.equal([])
  })

  it('does not fire after a fetch at 499 loose objects, fires at 500, and packs the unreachable ones too', async () => {
    const blobs = Array.from({length: 499}, (_, index) => writeLooseBlob(repo, `loose blob ${index}\n`))
    expect(await objectCounts(repo)).to.deep.equal({packs: 1, looseObjects: 499})
    expect((await h.cache.fetch(h.root, upstream)).maintained).to.equal(false)
    expect(maintenanceCalls(h)).to.deep.equal([])

    blobs.push(writeLooseBlob(repo, 'the five hundredth\n'))
    expect((await h.cache.fetch(h.root, upstream)).maintained).to.equal(true)
    expect(maintenanceCalls(h)).to.deep.equal(MAINTENANCE)
    expect(await objectCounts(repo)).to.deep.equal({packs: 1, looseObjects: 0})
    expect(missingObjects(repo, blobs)).to.deep.equal([])
    expect(pruning(h.argvs)).to.deep.equal([])
  })

  it('maintain without --force leaves a cache below the thresholds alone and says why; with force it runs', async () => {
    writeLooseBlob(repo, 'one\n')
    const skipped = await h.cache.maintain(h.root, upstream, {force: false})
    expect(skipped).to.deep.include({ran: false, before: {packs: 1, looseObjects: 1}})
    expect(skipped.reason).to.include('below the thresholds')
    expect(maintenanceCalls(h)).to.deep.equal([])
    const forced = await h.cache.maintain(h.root, upstream, {force: true})
    expect(forced).to.deep.include({ran: true, reason: 'forced', after: {packs: 1, looseObjects: 0}})
    expect(maintenanceCalls(h)).to.deep.equal(MAINTENANCE)
    expect(pruning(h.argvs)).to.deep.equal([])
  })
})
