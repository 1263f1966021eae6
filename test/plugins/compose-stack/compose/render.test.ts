/**
 * The rendered compose file reads back as the resolved model in PyYAML (what podman-compose
 * parses with, YAML 1.1) and in the `yaml` package, with `$` doubled for the provider's own
 * interpolation.
 */
import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {parse} from 'yaml'

import type {ComposeModelDocument} from '../../../../src/plugins/compose-stack/compose/types.js'

import {escapeInterpolation} from '../../../../src/plugins/compose-stack/compose/interpolate.js'
import {renderComposeFile} from '../../../../src/plugins/compose-stack/compose/render.js'

const model: ComposeModelDocument = {
  services: {
    web: {
      image: 'busybox',
      command: ['sh', '-c', 'echo $HOME ${X}'],
      ports: ['22:22', '59:59/udp', '127.0.0.1:8080:80', '[::1]:9229:9229', {target: 80, published: '8081'}],
      environment: {FLAG: 'on', YES: 'yes', N: 'no', OCTAL: '0755', SEXAGESIMAL: '1:30', NULLISH: '~', EMPTY: ''},
      labels: {'com.example.flag': 'off'},
      privileged: true,
      secrets: [{source: 's', mode: 0o440}],
    },
  },
  volumes: {data: null},
}

describe('renderComposeFile', () => {
  const text = renderComposeFile(model)

  it("reads back in PyYAML (podman-compose's parser) as the model with $ doubled", () => {
    const json = execFileSync(
      'python3',
      ['-c', 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))'],
      {input: text, encoding: 'utf8'},
    )
    expect(JSON.parse(json)).to.deep.equal(escapeInterpolation(model))
  })

  it("reads back in YAML 1.2 (Compose's Go parser reads the same) as the model with $ doubled", () => {
    expect(parse(text)).to.deep.equal(escapeInterpolation(model))
    expect(text).to.include('echo $$HOME $${X}')
  })
})
