import {expect} from 'chai'
import {mkdirSync} from 'node:fs'
import path from 'node:path'

import {loadConfig} from '../../../src/core/config/config.js'
import {cleanupTemp, tempDir, writeFile} from '../../support/repo.js'

describe('[box] mounts (docs/configuration.md)', () => {
  afterEach(cleanupTemp)

  it('defaults to "all", is read from the main checkout and yard.local.toml, and a worktree\'s own yard.toml cannot widen it', async () => {
    const main = path.join(tempDir(), 'app')
    const feat = path.join(`${main}-worktrees`, 'feat')
    mkdirSync(feat, {recursive: true})
    const load = async () => {
      const warnings: string[] = []
      const config = await loadConfig({
        mainPath: main,
        checkout: {path: feat, name: 'feat'},
        env: {},
        warn: (message) => warnings.push(message),
      })
      return {mounts: config.box.mounts, image: config.box.image, origin: config.origins['box.mounts'], warnings}
    }

    expect(await load()).to.deep.include({mounts: 'all', origin: 'default'})
    writeFile(main, 'yard.toml', '[box]\nmounts = "worktree"\n')
    writeFile(feat, 'yard.toml', '[box]\nimage = "localhost/mine:1"\nmounts = "all"\n')
    const widened = await load()
    expect(widened).to.deep.include({mounts: 'worktree', image: 'localhost/mine:1', origin: 'yard.toml'})
    expect(widened.warnings.join('\n')).to.include('sets [box] mounts; it is read from the main checkout')
    writeFile(main, 'yard.toml', '')
    writeFile(main, 'yard.local.toml', '[box]\nmounts = "worktree"\n')
    expect(await load()).to.deep.include({mounts: 'worktree', origin: 'yard.local.toml'})
    writeFile(main, 'yard.local.toml', '[box]\nmounts = "some"\n')
    expect(await load().catch(String)).to.match(/mounts/)
  })
})
