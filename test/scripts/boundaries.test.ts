/**
 * The import-boundary check (`.dependency-cruiser.cjs`, run by `npm run lint`): passes on the
 * real tree, and fails on a small tree that breaks each rule once — a plugin importing core, the
 * SDK importing core, a command importing a core file other than its domain's index, a cycle.
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {cleanupTemp, tempDir} from '../support/repo.js'
import {projectRoot} from '../support/yard.js'

const config = path.join(projectRoot, '.dependency-cruiser.cjs')
const depcruise = path.join(projectRoot, 'node_modules', '.bin', 'depcruise')

function cruise(cwd: string): {status: number | null; output: string} {
  const run = spawnSync(depcruise, ['--config', config, '--output-type', 'err', 'src'], {cwd, encoding: 'utf8'})
  return {status: run.status, output: run.stdout + run.stderr}
}

function tree(files: Record<string, string>): string {
  const root = tempDir('yard-boundaries')
  const all: Record<string, string> = {
    'tsconfig.json': JSON.stringify({
      compilerOptions: {module: 'NodeNext', moduleResolution: 'NodeNext', strict: true},
    }),
    'src/sdk/index.ts': 'export const sdk = 1\n',
    'src/core/stack/index.ts': "export {up} from './up.js'\n",
    'src/core/stack/up.ts': 'export const up = 1\n',
    ...files,
  }
  for (const [file, text] of Object.entries(all)) {
    mkdirSync(path.dirname(path.join(root, file)), {recursive: true})
    writeFileSync(path.join(root, file), text)
  }

  return root
}

describe('import boundaries (dependency-cruiser)', function () {
  this.timeout(60_000)

  after(cleanupTemp)

  it('passes on the real tree', () => {
    const run = cruise(projectRoot)
    expect(run.output).to.not.match(/error /)
    expect(run.status, run.output).to.equal(0)
  })

  it('passes on a small tree that keeps every rule', () => {
    const run = cruise(
      tree({
        'src/plugins/box/index.ts':
          "import {sdk} from '../../sdk/index.js'\nimport {helper} from './helper.js'\nexport const box = sdk + helper\n",
        'src/plugins/box/helper.ts': 'export const helper = 2\n',
        'src/commands/up.ts':
          "import {up} from '../core/stack/index.js'\nimport {sdk} from '../sdk/index.js'\nexport default up + sdk\n",
      }),
    )
    expect(run.status, run.output).to.equal(0)
  })

  const broken: Array<[string, string, Record<string, string>]> = [
    [
      'a plugin importing core',
      'plugin-imports-sdk-only',
      {'src/plugins/box/index.ts': "import {up} from '../../core/stack/index.js'\nexport const box = up\n"},
    ],
    [
      "a plugin importing another plugin's folder",
      'plugin-imports-sdk-only',
      {
        'src/plugins/box/index.ts': "import {other} from '../other/index.js'\nexport const box = other\n",
        'src/plugins/other/index.ts': 'export const other = 1\n',
      },
    ],
    [
      'the SDK importing core',
      'sdk-stands-alone',
      {'src/sdk/lock.ts': "import {up} from '../core/stack/index.js'\nexport const lock = up\n"},
    ],
    [
      "a command importing a core file past the domain's index",
      'enter-core-through-index',
      {'src/commands/up.ts': "import {up} from '../core/stack/up.js'\nexport default up\n"},
    ],
    [
      'two modules importing each other',
      'no-circular',
      {
        'src/core/stack/a.ts': "import {b} from './b.js'\nexport const a = () => b\n",
        'src/core/stack/b.ts': "import {a} from './a.js'\nexport const b = () => a\n",
      },
    ],
  ]
  for (const [what, rule, files] of broken) {
    it(`fails on ${what} (${rule})`, () => {
      const run = cruise(tree(files))
      expect(run.status, run.output).to.not.equal(0)
      expect(run.output).to.contain(`error ${rule}:`)
    })
  }
})
