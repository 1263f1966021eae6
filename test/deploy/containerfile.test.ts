import {expect} from 'chai'
/**
 * deploy/Containerfile builds the cache agent image (DESIGN.md §5.2; docs/cluster.md). No
 * registry is reachable here, so it is not built: its instructions are parsed and checked
 * against what the DaemonSet runs and what docs/cluster.md tells a reader to type.
 */
import {readFileSync} from 'node:fs'
import path from 'node:path'

import {defaultAgentImage} from '../../src/core/cluster/cluster.js'
import {clusterObjects} from '../../src/plugins/k8s-sandbox/cluster-objects.js'
import {projectRoot} from '../support/yard.js'

const containerfile = readFileSync(path.join(projectRoot, 'deploy', 'Containerfile'), 'utf8')
const guide = readFileSync(path.join(projectRoot, 'docs', 'cluster.md'), 'utf8')
const pkg = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as {
  name: string
  version: string
  engines: {node: string}
}

/** The instructions, continuation lines joined, comments dropped: `[KEYWORD, rest]`. */
function instructions(text: string): Array<[string, string]> {
  const joined = text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n')
    .replaceAll('\\\n', ' ')
  return joined
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [keyword, ...rest] = line.split(/\s+/)
      return [keyword, rest.join(' ')]
    })
}

describe('deploy/Containerfile (the cache agent image)', () => {
  const steps = instructions(containerfile)
  const args = new Map(
    steps
      .filter(([keyword]) => keyword === 'ARG')
      .map(([, rest]) => [rest.split('=', 1)[0], rest.includes('=') ? rest.slice(rest.indexOf('=') + 1) : undefined]),
  )

  it('uses only known instructions, from a node base image no older than package.json engines allow', () => {
    for (const [keyword] of steps)
      expect(['ARG', 'FROM', 'RUN', 'COPY', 'ENV', 'CMD', 'USER', 'WORKDIR', 'LABEL']).to.include(keyword)
    const from = steps.find(([keyword]) => keyword === 'FROM')![1]
    expect(from).to.equal('${NODE_IMAGE}')
    const major = Number(/node:(\d+)/.exec(args.get('NODE_IMAGE') ?? '')?.[1])
    // The range's first alternative is its oldest line (`>=22.22.2 <23 || …`).
    expect(major).to.be.at.least(Number(/^(?:\^|>=)\s*(\d+)/.exec(pkg.engines.node)![1]))
  })

  it('installs git and the packed yard, and runs what the DaemonSet runs', () => {
    const runs = steps.filter(([keyword]) => keyword === 'RUN').map(([, rest]) => rest)
    expect(runs.some((run) => /apt-get install .*\bgit\b/.test(run))).to.equal(true)
    expect(steps).to.deep.include(['COPY', '${YARD_TARBALL} /tmp/yard.tgz'])
    expect(
      runs.some(
        (run) =>
          run.includes('npm install --global') && run.includes('/tmp/yard.tgz') && run.includes('yard --version'),
      ),
    ).to.equal(true)
    const daemonSet = clusterObjects({
      namespace: 'yard',
      cacheRoot: '/var/lib/yard/yard/caches',
      image: 'x',
      version: pkg.version,
    }).at(-1) as any
    const command = daemonSet.spec.template.spec.containers[0].command as string[]
    expect(JSON.parse(steps.find(([keyword]) => keyword === 'CMD')![1])).to.deep.equal(command)
  })

  it("is built as docs/cluster.md says: every argument without a default is passed, the tarball is npm pack's, the tag is install's default", () => {
    const build = /podman build -f deploy\/Containerfile (.*?) -t (\S+) \./s.exec(guide.replaceAll(/\\\n\s*/g, ''))
    expect(build, 'a podman build command in docs/cluster.md').to.not.equal(null)
    const given = new Map([...build![1].matchAll(/--build-arg (\w+)=(\S+)/g)].map((match) => [match[1], match[2]]))
    for (const [name, fallback] of args)
      if (fallback === undefined) expect(given.has(name), `--build-arg ${name}`).to.equal(true)
    expect(given.get('YARD_TARBALL')).to.equal(`${pkg.name.replace(/^@/, '').replace('/', '-')}-${pkg.version}.tgz`)
    expect(build![2]).to.equal(defaultAgentImage(pkg.version))
  })
})
