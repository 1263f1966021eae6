/**
 * The port rule (DESIGN.md §4.2, docs/stacks.md): main and every worktree offset 1..89 publish
 * disjoint host ports, for the file of the issue and for random files, with bind address,
 * protocol and ranges kept.
 */
import {expect} from 'chai'
import fc from 'fast-check'

import type {Target} from '../../../src/core/backend.js'
import type {ComposeModelDocument} from '../../../src/plugins/compose-stack/compose/types.js'
import {rewritePorts} from '../../../src/plugins/compose-stack/isolate-ports.js'
import {movePort, portRule} from '../../../src/plugins/compose-stack/port-rule.js'
import {classify, parsePublished} from '../../../src/plugins/compose-stack/published-ports.js'

const target = (offset: number, ports: Record<string, number> = {}): Target => ({
  name: offset === 0 ? 'main' : `wt${offset}`, isMain: offset === 0, prefix: 'app', project: offset === 0 ? 'app' : `app-wt${offset}`, owner: 'o', offset, offsetSource: offset === 0 ? 'main' : 'pin',
  ports: Object.fromEntries(Object.entries(ports).map(([key, base]) => [key, base + offset])), checkoutPath: '/c', mainPath: '/c',
})

/** Every host port (ranges expanded) with its protocol the rendered services publish. */
function published(model: ComposeModelDocument): string[] {
  const out: string[] = []
  for (const service of Object.values(model.services)) {
    for (const entry of service.ports ?? []) {
      const port = parsePublished(entry)
      if (port?.host === undefined || classify(port) === 'engine') continue
      for (let host = port.host.start; host <= port.host.end; host++) out.push(`${host}/${port.protocol ?? 'tcp'}`)
    }
  }
  return out
}

type ModelAt = ComposeModelDocument | ((offset: number) => ComposeModelDocument)

const render = (model: ModelAt, offset: number, keys: Record<string, number> = {}) => {
  const copy = structuredClone(typeof model === 'function' ? model(offset) : model)
  rewritePorts(copy, target(offset, keys))
  return copy
}

/** Asserts that the host ports of offsets 0..89 are pairwise disjoint (and distinct within one). */
function expectDisjoint(model: ModelAt, keys: Record<string, number> = {}): void {
  const owner = new Map<string, number>()
  for (let offset = 0; offset <= 89; offset++) {
    const mine = published(render(model, offset, keys))
    for (const key of Object.values(keys)) mine.push(`${key + offset}/tcp`)
    for (const port of new Set(mine)) {
      if (owner.has(port)) expect.fail(`offsets ${owner.get(port)} and ${offset} both publish ${port}`)
      owner.set(port, offset)
    }
  }
}

const issueFile: ComposeModelDocument = {
  services: {
    web: {image: 'web', ports: ['80:80', '81:81', '127.0.0.1:82:82']},
    api: {image: 'api', ports: ['5000:5000', {target: 5044, published: 5044, protocol: 'tcp'}, '8000-8010:8000-8010', '3000']},
    vpn: {image: 'vpn', ports: ['51820:51820/udp']},
  },
}

describe('the port rule (DESIGN.md §4.2)', () => {
  it('gives main and worktrees 1..89 disjoint host ports for 80, 81, 82, 5000, 5044, 8000-8010, 51820/udp (every pair)', () => {
    expectDisjoint(issueFile)
  })

  it('keeps main literal, moves a worktree above 1024 with bind address, protocol, long syntax and ranges kept', () => {
    expect(render(issueFile, 0)).to.deep.equal(issueFile)
    const feat = render(issueFile, 3).services
    // L = 80 81 82 5000 5044 8000..8010 51820 (17 ports), stride 100, window at 20000: offset 3 starts at 20200.
    expect(feat.web.ports).to.deep.equal(['20200:80', '20201:81', '127.0.0.1:20202:82'])
    expect(feat.api.ports).to.deep.equal(['20203:5000', {target: 5044, published: '20204', protocol: 'tcp'}, '20205-20215:8000-8010', '3000'])
    expect(feat.vpn.ports).to.deep.equal(['20216:51820/udp'])
  })

  it('leaves ports that come from a [ports] key as they are, and keeps the window off [ports] ranges', () => {
    // The resolved model of each checkout: WEB_PORT interpolated as base + offset.
    const keyed = (offset: number): ComposeModelDocument => ({services: {web: {ports: [`${20_050 + offset}:80`, '5432:5432', '9000-9010:80']}}})
    // At offset 4 WEB_PORT = 20054: keyed, so it stays; the window skips [20050, 20139] (B = 20200); the
    // engine picks from 9000-9010 itself, so that entry is left alone.
    const feat = render(keyed, 4, {WEB_PORT: 20_050}).services
    expect(feat.web.ports).to.deep.equal(['20054:80', '20500:5432', '9000-9010:80'])
    expectDisjoint(keyed, {WEB_PORT: 20_050})
  })

  it('gives disjoint host ports for any file (property)', () => {
    const entry = fc.oneof(
      fc.integer({min: 1, max: 65_535}).map((port) => `${port}:${port}`),
      fc.tuple(fc.integer({min: 1, max: 65_000}), fc.integer({min: 0, max: 20})).map(([start, size]) => `${start}-${start + size}:${start}-${start + size}`),
      fc.integer({min: 1, max: 65_535}).map((port) => `127.0.0.1:${port}:80/udp`),
      fc.integer({min: 1, max: 65_535}).map((port) => ({target: 80, published: port})),
    )
    fc.assert(fc.property(fc.array(fc.array(entry, {maxLength: 5}), {minLength: 1, maxLength: 4}), (services) => {
      const model: ComposeModelDocument = {services: Object.fromEntries(services.map((ports, index) => [`s${index}`, {ports}]))}
      // A file whose fixed ports leave no window is refused (the report says so), never run half-moved.
      const refused = rewritePorts(structuredClone(model), target(1)).report.some((entry) => entry.kind === 'refused')
      fc.pre(!refused)
      expectDisjoint(model)
    }), {numRuns: 100})
  })

  it('refuses, rather than half-moves, a file whose fixed ports leave no window', () => {
    // 720 fixed ports: a stride of 800, and 89 blocks of 800 do not fit below 65536.
    const dense: ComposeModelDocument = {services: {s: {ports: Array.from({length: 80}, (_, index) => `${1100 + index * 800}-${1108 + index * 800}:${1100 + index * 800}-${1108 + index * 800}`)}}}
    const copy = structuredClone(dense)
    const {report} = rewritePorts(copy, target(5))
    expect(report.filter((entry) => entry.kind === 'refused')).to.have.length(80)
    expect(copy).to.deep.equal(dense)
  })

  it('is stable: a port moves to the same place on every call, and the stride grows past 100 ports', () => {
    const rule = portRule([{start: 1, end: 150}], [])
    expect(rule.stride).to.equal(200)
    expect(movePort(rule, 1, 1)).to.equal(movePort(rule, 1, 1))
    expect(movePort(rule, 150, 89) - movePort(rule, 1, 89)).to.equal(149)
  })
})
