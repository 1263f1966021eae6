/** The sandbox Pod and the `--repo` rules (DESIGN.md §5.2): pure, no podman. */
import {expect} from 'chai'

import type {SandboxSpec} from '../../../src/sdk/sandbox.js'
import type {Target} from '../../../src/sdk/target.js'

import {podManifest} from '../../../src/plugins/k8s-sandbox/manifest.js'
import {InputError} from '../../../src/sdk/errors.js'
import {branchDirectory, checkSandboxBranch, parseRepoFlag, parseRepoFlags} from '../../../src/sdk/sandbox-repos.js'

const target: Target = {
  name: 'feat',
  isMain: false,
  prefix: 'app',
  project: 'app-feat',
  owner: '0123456789ab',
  offset: 59,
  offsetSource: 'hash',
  ports: {WEB_PORT: 3059},
  checkoutPath: '/src/app',
  mainPath: '/src/app',
}

describe('k8s-sandbox: the Pod manifest (DESIGN.md §5.2)', () => {
  const repos = [
    parseRepoFlag('https://github.com/acme/app.git'),
    parseRepoFlag('lib=git@github.com:acme/lib.git#develop'),
  ]
  const spec: SandboxSpec = {
    runtime: 'podman',
    image: 'localhost/yard-default:abc',
    cacheRoot: '/var/caches',
    repos,
    branch: 'feat/login',
    portBases: {WEB_PORT: 3000},
  }

  it('is the Pod of §5.2: labels, one read-only hostPath per cache key, emptyDir /work, no token, no escalation', () => {
    const pod = podManifest(target, spec) as any
    expect(pod.apiVersion).to.equal('v1')
    expect(pod.kind).to.equal('Pod')
    expect(pod.metadata.name).to.equal('app-feat')
    expect(pod.metadata.labels).to.deep.equal({
      'app.kubernetes.io/managed-by': 'yard',
      'yard.dev/project': 'app-feat',
      'yard.dev/name': 'feat',
      'yard.dev/owner': '0123456789ab',
      'yard.dev/offset': '59',
      'yard.dev/prefix': 'app',
    })
    expect(pod.spec.automountServiceAccountToken).to.equal(false)
    const [container] = pod.spec.containers
    expect(pod.spec.containers).to.have.length(1)
    expect(container).to.deep.include({
      name: 'workspace',
      image: 'localhost/yard-default:abc',
      imagePullPolicy: 'IfNotPresent',
      command: ['sleep', 'infinity'],
    })
    expect(container.securityContext).to.deep.equal({allowPrivilegeEscalation: false})
    expect(container.ports).to.deep.equal([{name: 'web-port', containerPort: 3000, hostPort: 3059}])
    const [app, lib] = repos
    expect(container.volumeMounts).to.deep.equal([
      {name: `repo-${app.key}`, mountPath: `/repos/${app.key}`, readOnly: true},
      {name: `repo-${lib.key}`, mountPath: `/repos/${lib.key}`, readOnly: true},
      {name: 'work', mountPath: '/work'},
    ])
    expect(pod.spec.volumes).to.deep.equal([
      {name: `repo-${app.key}`, hostPath: {path: `/var/caches/${app.key}`, type: 'DirectoryOrCreate'}},
      {name: `repo-${lib.key}`, hostPath: {path: `/var/caches/${lib.key}`, type: 'DirectoryOrCreate'}},
      {name: 'work', emptyDir: {}},
    ])
    expect(JSON.parse(pod.metadata.annotations['yard.dev/spec'])).to.deep.equal(spec)
  })

  it('mounts a repository held by two slots once, and publishes no host port on a cluster', () => {
    const twice = [parseRepoFlag('/srv/git/app.git'), parseRepoFlag('other=/srv/git/app.git')]
    const pod = podManifest(target, {...spec, runtime: 'kubernetes', repos: twice}) as any
    expect(pod.spec.volumes).to.have.length(2)
    expect(pod.spec.containers[0].ports).to.deep.equal([{name: 'web-port', containerPort: 3000}])
  })
})

describe('k8s-sandbox: --repo [SLOT=]URL[#REF] and branches (DESIGN.md §5.2)', () => {
  it('reads SLOT= only when it is a valid name, the ref after the last #, the default slot from the identity', () => {
    expect(parseRepoFlag('lib=git@github.com:acme/Lib.git#develop')).to.deep.include({
      slot: 'lib',
      url: 'git@github.com:acme/Lib.git',
      ref: 'develop',
      identity: 'github.com/acme/Lib',
    })
    expect(parseRepoFlag('/srv/a#b.git#v1')).to.deep.include({url: '/srv/a#b.git', ref: 'v1'})
    expect(parseRepoFlag('https://host/org/a=b.git')).to.deep.include({
      slot: 'a-b',
      url: 'https://host/org/a=b.git',
      ref: null,
    })
    expect(parseRepoFlag('/srv/git/My_App.git#develop')).to.deep.include({slot: 'my-app', ref: 'develop'})
  })

  it('refuses (exit 2) two repositories in one slot, an empty or option-like ref, an option-like url, none at all', () => {
    for (const values of [
      ['/srv/a.git', 'a=/srv/b.git'],
      ['/srv/a.git#'],
      ['/srv/a.git#-x'],
      ['--upload-pack=x'],
      [],
    ]) {
      expect(() => parseRepoFlags(values), values.join(' ')).to.throw(InputError)
    }
  })

  it('refuses branch default and a leading "-"; the directory is the branch with / → -', () => {
    expect(() => checkSandboxBranch('default')).to.throw(InputError, 'the branch "default" is refused')
    expect(() => checkSandboxBranch('-b')).to.throw(InputError)
    expect(checkSandboxBranch('feat/login')).to.equal('feat/login')
    expect(branchDirectory('feat/login/x')).to.equal('feat-login-x')
  })
})
