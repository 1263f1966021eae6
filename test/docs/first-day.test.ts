/**
 * What a newcomer reads first stays true: the README's first example makes its worktree with
 * `yard worktree add` and says to commit yard.toml and .gitignore; the exit-code table is whole;
 * the docs give the default image one size; no page says yard ships no sandbox backend.
 */
import {expect} from 'chai'
import {readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'

import {projectRoot} from '../support/oclif-config.js'

const read = (...parts: string[]) => readFileSync(path.join(projectRoot, ...parts), 'utf8')

describe('the first pages a newcomer reads', () => {
  it('README: the first example uses yard worktree add and commits yard.toml and .gitignore; exit 127 is listed', () => {
    const readme = read('README.md')
    const first = /```console\n([\s\S]*?)```/.exec(readme)?.[1] ?? ''
    expect(first).to.match(/^\$ yard worktree add feat/m)
    expect(first).not.to.contain('git worktree add')
    expect(first).to.match(/git add yard\.toml \.gitignore/)
    expect(readme).to.match(/^\| 127 \| also: an unknown command/m)
    expect(readme).to.contain('export CONTAINERS_CONF=')
  })

  it("docs: one figure for the default image's size, and the sandbox backend that ships", () => {
    const texts = [
      read('README.md'),
      ...readdirSync(path.join(projectRoot, 'docs')).map((name) => read('docs', name)),
      read('src', 'commands', 'image', 'build.ts'),
    ]
    const sizes = new Set(
      texts.flatMap((text) => [...text.matchAll(/(\d+) MB[^\n]{0,40}podman image ls/g)].map((match) => match[1])),
    )
    expect([...sizes]).to.have.length(1)
    for (const text of texts) expect(text).not.to.match(/about a minute[,;]? (~|and )\d+ MB/)
    expect(read('docs', 'worktrees.md')).not.to.contain('No sandbox backend ships')
  })
})
