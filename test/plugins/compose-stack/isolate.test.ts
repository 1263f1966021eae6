/**
 * The isolation rewrites and the report (DESIGN.md §4.2, docs/stacks.md), on resolved models as
 * the resolver gives them: main runs its literal values plus yard's labels; a worktree gets its
 * own names, tags and ports, and what cannot be isolated is refused or reported as shared.
 */
import {expect} from 'chai'

import type {ComposeModelDocument} from '../../../src/plugins/compose-stack/compose/types.js'
import type {Target} from '../../../src/sdk/target.js'

import {imageReferenceProblem} from '../../../src/core/machine/image-reference.js'
import {isolate, type IsolationSettings, projectImageTag} from '../../../src/plugins/compose-stack/isolate.js'
import {refusalError} from '../../../src/plugins/compose-stack/isolation-report.js'

const main: Target = {
  name: 'main',
  isMain: true,
  prefix: 'app',
  project: 'app',
  owner: 'o1',
  offset: 0,
  offsetSource: 'main',
  ports: {},
  checkoutPath: '/src/app',
  mainPath: '/src/app',
}
const feat: Target = {
  ...main,
  name: 'feat',
  isMain: false,
  project: 'app-feat',
  offset: 7,
  offsetSource: 'hash',
  checkoutPath: '/src/app-worktrees/feat',
}
const labels = (target: Target) => ({'yard.dev/owner': 'o1', 'yard.dev/project': target.project})
const settings: IsolationSettings = {external: 'refuse', allowShared: []}

const model = (): ComposeModelDocument => ({
  services: {
    web: {
      image: 'web:1',
      build: {context: '/src/app-worktrees/feat/web'},
      container_name: 'web',
      labels: {team: 'a'},
      ports: ['80:80'],
      volumes: ['/app/node_modules', '/src/app-worktrees/feat/src:/src'],
    },
    db: {image: 'postgres:16', networks: {back: null}, volumes: ['pgdata:/var/lib/postgresql/data']},
  },
  volumes: {pgdata: null, logs: {name: 'shared-logs'}},
  networks: {back: {}, unused: {}},
})

describe('isolation rewrites (DESIGN.md §4.2)', () => {
  it("main: literal values, yard's labels on every service, volume and network, networks made explicit", () => {
    const {compose, report, networks} = isolate(model(), main, settings)
    expect(report).to.deep.equal([])
    expect(compose.services.web).to.include({image: 'web:1', container_name: 'web'})
    expect(compose.services.web.ports).to.deep.equal(['80:80'])
    expect(compose.services.web.labels).to.deep.equal({team: 'a', ...labels(main), 'yard.dev/checkout': '/src/app'})
    expect(compose.services.web.networks).to.deep.equal(['default'])
    expect(compose.services.db.networks).to.deep.equal(['back'])
    expect(compose.volumes).to.deep.equal({
      pgdata: {labels: labels(main)},
      logs: {name: 'shared-logs', labels: labels(main)},
    })
    // `unused` is dropped (podman-compose 1.0.3 refuses declared networks no service joins).
    expect(compose.networks).to.deep.equal({back: {labels: labels(main)}, default: {labels: labels(main)}})
    expect(networks.sort()).to.deep.equal(['app_back', 'app_default'])
  })

  it("worktree: container_name, fixed volume names and built images become the project's; each rewrite is reported", () => {
    const input = model()
    const {compose, report} = isolate(input, feat, settings)
    expect(input.services.web.container_name, 'the resolved model is not changed').to.equal('web')
    expect(compose.services.web.container_name).to.equal('app-feat-web')
    expect(compose.services.web.image).to.equal('web:1-app-feat')
    expect(compose.services.db.image, 'an image without build: is pulled as is').to.equal('postgres:16')
    expect(compose.volumes?.logs).to.deep.equal({name: 'app-feat_shared-logs', labels: labels(feat)})
    expect(compose.services.web.ports).to.deep.equal(['20600:80'])
    expect(report.map((entry) => [entry.kind, entry.service, entry.detail])).to.deep.equal([
      ['rewrite', 'web', 'host port 80 (container 80)'],
      ['rewrite', 'web', 'container_name web'],
      ['rewrite', 'web', 'image web:1 built from build:'],
      ['rewrite', 'volumes.logs', 'name shared-logs'],
    ])
  })

  it("worktree: a container_name holding the project name stays, a service running a built image runs the worktree's build, a host-network service keeps its ports", () => {
    const file: ComposeModelDocument = {
      services: {
        db: {image: 'pg', container_name: 'app-feat-db'},
        web: {image: 'myapp:dev', build: {context: '/src/app-worktrees/feat'}, ports: ['8000:8000']},
        celery: {image: 'myapp:dev'},
        other: {image: 'myapp:prod'},
        hass: {image: 'ha', network_mode: 'host', ports: ['8123:8123']},
      },
    }
    const {compose, report, ports} = isolate(file, feat, {...settings, allowShared: ['hass']})
    expect(compose.services.db.container_name, 'interpolated per checkout already').to.equal('app-feat-db')
    expect(compose.services.web.image).to.equal('myapp:dev-app-feat')
    expect(compose.services.celery.image).to.equal('myapp:dev-app-feat')
    expect(compose.services.other.image).to.equal('myapp:prod')
    expect(compose.services.hass.ports, 'the engine discards them').to.deep.equal(['8123:8123'])
    expect(ports.map((port) => port.service)).to.deep.equal(['web'])
    expect(report.map((entry) => [entry.kind, entry.service, entry.detail])).to.deep.include.members([
      ['rewrite', 'celery', 'image myapp:dev built by this project'],
    ])
    expect(report.some((entry) => entry.service === 'hass' && entry.kind === 'rewrite')).to.equal(false)
    expect(report.some((entry) => entry.service === 'db')).to.equal(false)
    // The builder left out by a profile (`--profile build build`, then `--profile demo up`): the
    // resolver's builtImages still name its image.
    const demo = isolate({services: {demo: {image: 'local/demo:latest'}}}, feat, settings, undefined, [
      'local/demo:latest',
    ])
    expect(demo.compose.services.demo.image).to.equal('local/demo:latest-app-feat')
    const renamed = isolate(model(), feat, settings).report.find((entry) => entry.detail === 'container_name web')
    expect(renamed?.action).to.equal(
      "named app-feat-web in this worktree; other containers reach it by its service name web (web is main's)",
    )
  })

  it('worktree: network_mode container: and volumes_from container: follow the renamed container; others are refused or shared', () => {
    const file: ComposeModelDocument = {
      services: {
        vpn: {image: 'v', container_name: 'vpn'},
        app: {
          image: 'a',
          network_mode: 'container:vpn',
          volumes_from: ['container:vpn:ro', 'vpn', 'container:app_web_1'],
        },
        web: {image: 'w', network_mode: 'service:vpn', volumes_from: ['container:company-cache']},
        probe: {image: 'p', network_mode: 'container:company-proxy'},
      },
    }
    const {compose, report} = isolate(file, feat, settings)
    expect(compose.services.vpn.container_name).to.equal('app-feat-vpn')
    expect(compose.services.app.network_mode).to.equal('container:app-feat-vpn')
    // main's default name of the web service (podman-compose: <project>_<service>_1) becomes the worktree's.
    expect(compose.services.app.volumes_from).to.deep.equal([
      'container:app-feat-vpn:ro',
      'vpn',
      'container:app-feat_web_1',
    ])
    expect(compose.services.web.network_mode, 'a service key does not change').to.equal('service:vpn')
    expect(compose.services.web.volumes_from).to.deep.equal(['container:company-cache'])
    expect(compose.services.probe.network_mode).to.equal('container:company-proxy')
    expect(
      report
        .filter((entry) => entry.kind !== 'rewrite' || entry.detail.includes('container:'))
        .map((entry) => [entry.kind, entry.service, entry.detail.split(' joins', 1)[0]]),
    ).to.deep.equal([
      ['rewrite', 'app', 'network_mode: container:vpn'],
      ['rewrite', 'app', 'volumes_from container:vpn:ro'],
      ['rewrite', 'app', 'volumes_from container:app_web_1'],
      ['shared', 'web', 'volumes_from container:company-cache'],
      ['refused', 'probe', 'network_mode: container:company-proxy'],
    ])
    expect(refusalError(feat.project, report)!.fix).to.include('[stack] allow-shared = ["probe"]')
    const allowed = isolate(file, feat, {...settings, allowShared: ['probe']}).report.find(
      (entry) => entry.service === 'probe',
    )!
    expect(allowed.kind).to.equal('shared')
    expect(isolate(file, main, settings).compose.services.app.network_mode, 'main runs its literal values').to.equal(
      'container:vpn',
    )
  })

  it('suggests one [stack] allow-shared setting for every service refused for sharing, keeping those allowed', () => {
    const file: ComposeModelDocument = {
      services: {
        agent: {image: 'a', network_mode: 'host'},
        probe: {image: 'p', network_mode: 'container:proxy'},
        'my"odd': {image: 'o', network_mode: 'host'},
        old: {image: 'o', network_mode: 'host'},
      },
    }
    const refused = isolate(file, feat, {...settings, allowShared: ['old']}).report.filter(
      (entry) => entry.kind === 'refused',
    )
    expect(refused).to.have.length(3)
    for (const entry of refused)
      expect(entry.action).to.include(
        String.raw`[stack] allow-shared = ["old", "probe", "agent", "my\"odd"] in yard.toml`,
      )
  })

  it('tags builds per project, keeping the repository and tag', () => {
    expect(projectImageTag('registry.example.com:5000/team/app', 'app-feat')).to.equal(
      'registry.example.com:5000/team/app:latest-app-feat',
    )
    expect(projectImageTag('app:1.2', 'app-feat')).to.equal('app:1.2-app-feat')
    expect(projectImageTag('app@sha256:abc', 'app-feat')).to.equal(undefined)
  })

  it('gives a valid, distinct tag for long tags and projects, empty tags and odd characters', () => {
    const long = 'a'.repeat(120)
    const project = `app-${'f'.repeat(60)}`
    const one = projectImageTag(`registry.example.com/team/app:${long}`, project)!
    const two = projectImageTag(`registry.example.com/team/app:${long}`, `${project}x`)!
    for (const image of [
      one,
      two,
      projectImageTag('app:', 'app-feat')!,
      projectImageTag('app:.hidden', 'app-feat')!,
      projectImageTag(`app:${'v'.repeat(128)}`, 'a')!,
    ]) {
      expect(imageReferenceProblem(image), image).to.equal(undefined)
      expect(image.slice(image.lastIndexOf(':') + 1)).to.match(/^\w[\w.-]{0,127}$/)
    }

    expect(one).to.not.equal(two)
    expect(one).to.match(/^registry\.example\.com\/team\/app:a{115}-[0-9a-f]{12}$/)
    expect(projectImageTag('app:', 'app-feat')).to.equal('app:latest-app-feat')
    expect(projectImageTag('app:.hidden', 'app-feat')).to.equal('app:hidden-app-feat')
  })

  it('refuses network_mode: host, fixed addresses, subnets and external resources in a worktree, with the way out', () => {
    const risky: ComposeModelDocument = {
      services: {
        agent: {image: 'a', network_mode: 'host'},
        dns: {image: 'd', networks: {back: {ipv4_address: '172.30.0.53'}}},
        db: {image: 'p', volumes: ['pg:/data']},
      },
      volumes: {pg: {external: true, name: 'company-pg'}},
      networks: {back: {ipam: {config: [{subnet: '172.30.0.0/24'}]}}},
    }
    const {report} = isolate(risky, feat, settings)
    const refused = report.filter((entry) => entry.kind === 'refused')
    expect(refused.map((entry) => entry.service)).to.deep.equal(['volumes.pg', 'agent', 'dns', 'networks.back'])
    expect(refused[0].action).to.include('[stack] external = "per-checkout"')
    expect(refused[1].action).to.include('[stack] allow-shared = ["agent"]')
    const error = refusalError(feat.project, report)!
    expect(error.code).to.equal(3)
    expect(error.message).to.include('agent: network_mode: host')
    expect(isolate(risky, main, settings).report, 'main runs its literal values').to.deep.equal([])
  })

  it("[stack] external and allow-shared: per-checkout volumes are the project's own; shared ones are said", () => {
    const file: ComposeModelDocument = {
      services: {db: {image: 'p', volumes: ['pg:/data']}, agent: {image: 'a', network_mode: 'host'}},
      volumes: {pg: {external: true}},
    }
    const own = isolate(file, feat, {external: 'per-checkout', allowShared: ['agent']})
    expect(own.compose.volumes?.pg).to.deep.equal({name: 'app-feat_pg', labels: labels(feat)})
    expect(own.report.map((entry) => entry.kind)).to.deep.equal(['rewrite', 'shared'])
    const shared = isolate(file, feat, {external: 'shared', allowShared: []})
    expect(shared.compose.volumes?.pg).to.deep.equal({external: true})
    expect(shared.report.map((entry) => [entry.kind, entry.service])).to.deep.equal([
      ['shared', 'volumes.pg'],
      ['refused', 'agent'],
    ])
  })

  it('says what stays shared: binds outside the checkout, the engine socket, secrets from outside', () => {
    const file: ComposeModelDocument = {
      services: {
        web: {
          image: 'w',
          volumes: [
            '/var/run/docker.sock:/var/run/docker.sock',
            '/home/me/data:/data',
            '/src/app-worktrees/feat/conf:/conf',
            {type: 'bind', source: '/srv/logs', target: '/logs'},
          ],
        },
      },
      secrets: {key: {file: '/home/me/key.pem'}, local: {file: '/src/app-worktrees/feat/secret.txt'}},
    }
    const {report} = isolate(file, feat, settings)
    expect(report.map((entry) => [entry.kind, entry.service, entry.detail])).to.deep.equal([
      ['shared', 'web', 'the engine socket /var/run/docker.sock'],
      ['shared', 'web', 'bind mount /home/me/data'],
      ['shared', 'web', 'bind mount /srv/logs'],
      ['shared', 'secrets.key', 'file /home/me/key.pem'],
    ])
  })
})
