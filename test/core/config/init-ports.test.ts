/** `yard init` with a compose file: commented `[ports]` examples from its own variables (DESIGN.md §4.1, §4.2). */
import {expect} from 'chai'
import {writeFileSync} from 'node:fs'
import path from 'node:path'
import {parse} from 'smol-toml'

import {loadConfig} from '../../../src/core/config/config.js'
import {composePortExamples} from '../../../src/core/config/init-ports.js'
import {yardTomlTemplate} from '../../../src/core/config/init.js'
import {cleanupTemp, tempDir, writeFile} from '../../support/repo.js'

const uncomment = (text: string) => text.replaceAll(/^# ([A-Za-z_][\w-]* = )/gm, '$1')

describe('yard init: [ports] examples from the compose file', () => {
  afterEach(cleanupTemp)

  it("proposes the file's own port variables, commented, and only ones the config check accepts together", async () => {
    const main = path.join(tempDir(), 'shop')
    writeFile(
      main,
      'compose.yaml',
      [
        'services:',
        '  web: {image: w, ports: ["${WEB_PORT:-8080}:80", "${ADMIN_PORT:-8081}:81"]}',
        '  db: {image: p, ports: ["5432:5432", "${DB_PORT-5432}:5432"]}',
        '  api: {image: a, ports: [{target: 80, published: "${API_PORT:-9000}"}], environment: {TIMEOUT: "${TIMEOUT:-30}"}}',
        '  own: {image: o, ports: ["${YARD_X:-7000}:70", "${HOME:-7500}:75"]}',
        '',
      ].join('\n'),
    )
    // ADMIN_PORT's range meets WEB_PORT's; yard's own and shell variables are not [ports] keys.
    expect(composePortExamples(main)).to.deep.equal([
      {key: 'WEB_PORT', base: 8080},
      {key: 'DB_PORT', base: 5432},
      {key: 'API_PORT', base: 9000},
    ])
    const text = yardTomlTemplate({mainDirectoryName: 'shop', portExamples: composePortExamples(main)})
    expect(text).to.include('# WEB_PORT = 8080\n# DB_PORT = 5432\n# API_PORT = 9000\n')
    expect(text).to.include('Not needed: yard moves the host ports the compose file publishes itself')
    expect(parse(text).ports, 'nothing is proposed as a value').to.deep.equal({})
    writeFileSync(path.join(main, 'yard.toml'), uncomment(text))
    expect((await loadConfig({mainPath: main, env: {}})).ports).to.deep.equal({
      WEB_PORT: 8080,
      DB_PORT: 5432,
      API_PORT: 9000,
    })
  })

  it('without a compose file keeps the generic examples', async () => {
    expect(composePortExamples(tempDir())).to.deep.equal([])
  })
})
