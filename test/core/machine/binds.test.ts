/**
 * Binds a podman machine cannot see (DESIGN.md §4.3): which compose volume entries are host paths
 * outside the mounts.
 */
import {expect} from 'chai'
import path from 'node:path'

import {bindsOutside} from '../../../src/core/machine/binds.js'
import {cleanupTemp, tempDir, writeFile} from '../../support/repo.js'

describe('bindsOutside (DESIGN.md §4.3)', () => {
  after(cleanupTemp)

  it('finds short and long binds outside the mounts, interpolated, and leaves named volumes and paths inside alone', async () => {
    const main = path.join(tempDir(), 'app')
    const root = `${main}-worktrees`
    writeFile(
      main,
      'compose.yaml',
      [
        'services:',
        '  db:',
        '    volumes:',
        '      - /srv/data:/data',
        '      - pgdata:/var/lib/postgresql',
        '      - ./seed:/seed:ro',
        '      - ${CACHE_DIR:-/var/cache/app}:/cache',
        '      - type: bind',
        '        source: $LOGS',
        '        target: /logs',
        '      - type: volume',
        '        source: other',
        '        target: /other',
        '  web:',
        '    volumes:',
        `      - ${root}/feat/assets:/assets`,
        '      - ../elsewhere:/up',
        '      - /tmp',
        '',
      ].join('\n'),
    )
    const file = path.join(main, 'compose.yaml')
    const found = await bindsOutside([file], {LOGS: '/var/log/app'}, [main, root])
    expect(found).to.deep.equal([
      {file, service: 'db', source: '/srv/data'},
      {file, service: 'db', source: '/var/cache/app'},
      {file, service: 'db', source: '/var/log/app'},
      {file, service: 'web', source: path.join(path.dirname(main), 'elsewhere')},
    ])
    expect(
      (await bindsOutside([file], {CACHE_DIR: `${main}/cache`, LOGS: `${root}/logs`}, [main, root])).map(
        (bind) => bind.source,
      ),
    ).to.deep.equal(['/srv/data', path.join(path.dirname(main), 'elsewhere')])
  })

  it('skips a file it cannot parse (the stack backend reports it)', async () => {
    const dir = tempDir()
    writeFile(dir, 'compose.yaml', 'services: [unclosed\n')
    expect(await bindsOutside([path.join(dir, 'compose.yaml')], {}, [dir])).to.deep.equal([])
  })
})
