/**
 * The port rule (DESIGN.md §4.2, docs/stacks.md): main and every worktree offset 1..89 publish
 * disjoint host ports, for the file of the issue and for random files, with bind address,
 * protocol and ranges kept.
 */
import {expect} from 'chai'
import fc from 'fast-check'

import type {ComposeModelDocument} from '../../../src/plugins/compose-stack/compose/types.js'
import type {Target} from '../../../src/sdk/target.js'

import {mayBeKeyed, probePortValues, rewritePorts} from '../../../src/plugins/compose-stack/isolate-ports.js'
import {movePort, portRule} from '../../../src/plugins/compose-stack/port-rule.js'
import {classify, parsePublished} from '../../../src/plugins/compose-stack/published-ports.js'

const target = (offset: number, ports: Record<string, number> = {}): Target => ({
  name: offset === 0 ? 'main' : `wt${offset}`,
  isMain: offset === 0,
  prefix: 'app',
  project: offset === 0 ? 'app' : `app-wt${offset}`,
  owner: 'o',
  offset,
  offsetSource: offset === 0 ? 'main' : 'pin',
  ports: Object.fromEntries(Object.entries(ports).map(([key, base]) => [key, base + offset])),
  checkoutPath: '/c',
  mainPath: '/c',
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

/**
 * A checkout's rendered ports as stack-plan.ts makes them: the model resolved with the `[ports]`
 * values of `offset`, and, when a host port equals one, the probe resolved with them shifted.
 */
function renderKeyed(
  at: (values: Record<string, number>) => ComposeModelDocument,
  offset: number,
  bases: Record<string, number>,
) {
  const checkout = target(offset, bases)
  const model = at(checkout.ports)
  const probe = mayBeKeyed(model, checkout) ? at(probePortValues(model, checkout)!) : undefined
  const {report} = rewritePorts(model, checkout, probe)
  return {model, report}
}

/**
 * Asserts that no checkout (offsets 0..89) publishes a host port twice, and that the host ports
 * of different checkouts — what they publish and their `[ports]` values, used or not — are disjoint.
 */
function expectDisjointKeyed(
  at: (values: Record<string, number>) => ComposeModelDocument,
  bases: Record<string, number>,
): void {
  const owner = new Map<number, number>()
  for (let offset = 0; offset <= 89; offset++) {
    const mine = published(renderKeyed(at, offset, bases).model).map((port) => Number.parseInt(port, 10))
    const twice = mine.find((port, index) => mine.indexOf(port) !== index)
    if (twice !== undefined) expect.fail(`offset ${offset} publishes ${twice} twice`)
    for (const port of new Set([...mine, ...Object.values(bases).map((base) => base + offset)])) {
      if (owner.has(port)) expect.fail(`offsets ${owner.get(port)} and ${offset} both hold ${port}`)
      owner.set(port, offset)
    }
  }
}

const issueFile: ComposeModelDocument = {
  services: {
    web: {image: 'web', ports: ['80:80', '81:81', '127.0.0.1:82:82']},
    api: {
      image: 'api',
      ports: ['5000:5000', {target: 5044, published: 5044, protocol: 'tcp'}, '8000-8010:8000-8010', '3000'],
    },
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
    expect(feat.api.ports).to.deep.equal([
      '20203:5000',
      {target: 5044, published: '20204', protocol: 'tcp'},
      '20205-20215:8000-8010',
      '3000',
    ])
    expect(feat.vpn.ports).to.deep.equal(['20216:51820/udp'])
  })

  it('leaves ports that come from a [ports] key as they are, and keeps the window off [ports] ranges', () => {
    // The resolved model of each checkout: WEB_PORT interpolated as base + offset.
    const keyed = (offset: number): ComposeModelDocument => ({
      services: {web: {ports: [`${20_050 + offset}:80`, '5432:5432', '9000-9010:80']}},
    })
    // At offset 4 WEB_PORT = 20054: keyed, so it stays; the window skips [20050, 20139] (B = 20200); the
    // engine picks from 9000-9010 itself, so that entry is left alone.
    const feat = render(keyed, 4, {WEB_PORT: 20_050}).services
    expect(feat.web.ports).to.deep.equal(['20054:80', '20500:5432', '9000-9010:80'])
    expectDisjoint(keyed, {WEB_PORT: 20_050})
  })

  it('gives disjoint host ports for any file (property)', () => {
    const entry = fc.oneof(
      fc.integer({min: 1, max: 65_535}).map((port) => `${port}:${port}`),
      fc
        .tuple(fc.integer({min: 1, max: 65_000}), fc.integer({min: 0, max: 20}))
        .map(([start, size]) => `${start}-${start + size}:${start}-${start + size}`),
      fc.integer({min: 1, max: 65_535}).map((port) => `127.0.0.1:${port}:80/udp`),
      fc.integer({min: 1, max: 65_535}).map((port) => ({target: 80, published: port})),
    )
    fc.assert(
      fc.property(fc.array(fc.array(entry, {maxLength: 5}), {minLength: 1, maxLength: 4}), (services) => {
        const model: ComposeModelDocument = {
          services: Object.fromEntries(services.map((ports, index) => [`s${index}`, {ports}])),
        }
        // A file whose fixed ports leave no window is refused (the report says so), never run half-moved.
        const refused = rewritePorts(structuredClone(model), target(1)).report.some((entry) => entry.kind === 'refused')
        fc.pre(!refused)
        expectDisjoint(model)
      }),
      {numRuns: 100},
    )
  })

  it('gives disjoint host ports for any file with a [ports] table, literals inside its ranges included (property)', () => {
    // Bases at least 90 apart (yard's config check), literals drawn near them (inside [base, base + 89],
    // equal to some worktree's value) and anywhere, and entries that use a key.
    const file = fc.uniqueArray(fc.integer({min: 0, max: 660}), {minLength: 1, maxLength: 3}).chain((slots) => {
      const bases = slots.map((slot) => 1024 + slot * 97)
      const near = fc
        .tuple(fc.constantFrom(...bases), fc.integer({min: 0, max: 89}))
        .map(([base, delta]) => base + delta)
      const literal = fc.tuple(
        fc.oneof(near, fc.integer({min: 1, max: 65_535})),
        fc.integer({min: 0, max: 3}),
        fc.constantFrom('tcp', 'udp'),
      )
      const entry = fc.oneof(
        literal.map(([port, size, protocol]) => ({
          literal: {start: port, end: Math.min(port + size, 65_535)},
          protocol,
        })),
        fc.integer({min: 0, max: bases.length - 1}).map((key) => ({key: `K${key}`, protocol: 'tcp'})),
      )
      return fc.record({
        bases: fc.constant(Object.fromEntries(bases.map((base, index) => [`K${index}`, base]))),
        services: fc.array(fc.array(entry, {maxLength: 5}), {minLength: 1, maxLength: 4}),
      })
    })
    fc.assert(
      fc.property(file, ({bases, services}) => {
        // One file as written: every literal port at most once, every key at most once.
        const numbers = services
          .flat()
          .flatMap((entry) =>
            'literal' in entry
              ? Array.from(
                  {length: entry.literal.end - entry.literal.start + 1},
                  (_, index) => `p${entry.literal.start + index}`,
                )
              : [entry.key],
          )
        fc.pre(new Set(numbers).size === numbers.length)
        const at = (values: Record<string, number>): ComposeModelDocument => ({
          services: Object.fromEntries(
            services.map((entries, index) => [
              `s${index}`,
              {
                ports: entries.map((entry) =>
                  'literal' in entry
                    ? `${entry.literal.start}-${entry.literal.end}:${entry.literal.start}-${entry.literal.end}/${entry.protocol}`
                    : `${values[entry.key]}:8080`,
                ),
              },
            ]),
          ),
        })
        const refused = rewritePorts(at(bases), target(0, bases)).report.some((entry) => entry.kind === 'refused')
        fc.pre(!refused)
        expectDisjointKeyed(at, bases)
      }),
      {numRuns: 60},
    )
  })

  it("a literal equal to a worktree's [ports] value is moved there, and main moves its literals inside a [ports] range", () => {
    const bases = {DB_PORT: 5432}
    // The replica's 5433 is DB_PORT at offset 1; the admin's 5500 is DB_PORT at offset 68.
    const at = (values: Record<string, number>): ComposeModelDocument => ({
      services: {
        db: {ports: [`${values.DB_PORT}:5432`]},
        replica: {ports: ['5433:5433']},
        admin: {ports: ['5500:80', '8080:8080']},
      },
    })
    expectDisjointKeyed(at, bases)
    const first = renderKeyed(at, 1, bases)
    expect(first.model.services.db.ports).to.deep.equal(['5433:5432'])
    // L = 5433 5500 8080; the window avoids [5432, 5521] and L: B = 20000, offset 1's block starts there.
    expect(first.model.services.replica.ports).to.deep.equal(['20000:5433'])
    const main = renderKeyed(at, 0, bases)
    expect(main.model.services.db.ports).to.deep.equal(['5432:5432'])
    // Main's block is the 90th: 20000 + 89·100.
    expect(main.model.services.replica.ports).to.deep.equal(['28900:5433'])
    expect(main.model.services.admin.ports).to.deep.equal(['28901:80', '8080:8080'])
    expect(main.report.map((entry) => entry.action)).to.deep.equal([
      'published as 28900 (it lies in a [ports] range (DB_PORT 5432-5521), where a worktree publishes that key)',
      'published as 28901 (it lies in a [ports] range (DB_PORT 5432-5521), where a worktree publishes that key)',
    ])
  })

  it('probes the [ports] keys at valid ports that no entry of the file publishes, keeping their order', () => {
    const checkout = target(89, {LOW: 65_300, HIGH: 65_440})
    const model: ComposeModelDocument = {
      services: {s: {ports: [`65389:80`, `65529:81`, '65530-65535:90-95', '65388:65388']}},
    }
    const values = probePortValues(model, checkout)!
    // +1..+6 would leave 65535 or land on 65530-65535, so the keys move down: the first free d is −2.
    expect(values).to.deep.equal({LOW: 65_387, HIGH: 65_527})
  })

  it('refuses, rather than half-moves, a file whose fixed ports leave no window', () => {
    // 720 fixed ports: a stride of 800, and 89 blocks of 800 do not fit below 65536.
    const dense: ComposeModelDocument = {
      services: {
        s: {
          ports: Array.from(
            {length: 80},
            (_, index) => `${1100 + index * 800}-${1108 + index * 800}:${1100 + index * 800}-${1108 + index * 800}`,
          ),
        },
      },
    }
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
