/** Published ports as compose writes them (compose specification, "ports"): read, classified and written back. */
import {expect} from 'chai'

import {classify, formatPublished, parsePublished} from '../../../src/plugins/compose-stack/published-ports.js'

const table: Array<{entry: unknown; kind: 'fixed' | 'engine' | 'container' | undefined; moved?: unknown}> = [
  {entry: '5432:5432', kind: 'fixed', moved: '20000:5432'},
  {entry: '127.0.0.1:5432:5432', kind: 'fixed', moved: '127.0.0.1:20000:5432'},
  {entry: '[::1]:5432:5432/tcp', kind: 'fixed', moved: '[::1]:20000:5432/tcp'},
  {entry: '51820:51820/udp', kind: 'fixed', moved: '20000:51820/udp'},
  {entry: '8000-8010:8000-8010', kind: 'fixed', moved: '20000-20010:8000-8010'},
  {
    entry: {target: 5432, published: 5432, host_ip: '127.0.0.1', protocol: 'udp', mode: 'host'},
    kind: 'fixed',
    moved: {target: 5432, published: '20000', host_ip: '127.0.0.1', protocol: 'udp', mode: 'host'},
  },
  {entry: {target: 80, published: '8000-8010'}, kind: 'engine'},
  {entry: '8000-8010:80', kind: 'engine'},
  {entry: '127.0.0.1::5432', kind: 'container'},
  {entry: '5432', kind: 'container'},
  {entry: 5432, kind: 'container'},
  {entry: {target: 5432}, kind: 'container'},
  {entry: '1:2:3:4', kind: undefined},
  {entry: 'web:80', kind: undefined},
  {entry: ['not', 'a', 'port'], kind: undefined},
]

describe('published ports (compose specification, "ports")', () => {
  for (const row of table) {
    it(`${JSON.stringify(row.entry)} is ${row.kind ?? 'not a port entry'}`, () => {
      const port = parsePublished(row.entry)
      if (row.kind === undefined) return expect(port).to.equal(undefined)
      expect(classify(port!)).to.equal(row.kind)
      expect(formatPublished(port!), 'written back as it was').to.deep.equal(
        typeof row.entry === 'object' && port!.form === 'long' && port!.host
          ? {...row.entry!, published: String((row.entry as {published: unknown}).published)}
          : row.entry,
      )
      if (row.moved !== undefined) {
        const size = port!.host!.end - port!.host!.start
        expect(formatPublished(port!, {start: 20_000, end: 20_000 + size})).to.deep.equal(row.moved)
      }
    })
  }
})
