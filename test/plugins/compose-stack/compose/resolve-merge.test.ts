/**
 * The compose resolver, table-driven: the merge rules for override files (compose
 * specification, "Merge and override"), `!reset` / `!override`, and profiles.
 */
import {cleanupTemp} from '../../../support/repo.js'
import {type ResolverCase, runCases} from './resolve-support.js'

/** A base file and an override, merged as `compose.yaml` + `compose.override.yaml`. */
function pair(rule: string, base: string, override: string, services: Record<string, unknown>): ResolverCase {
  return {rule, files: {'compose.yaml': base, 'compose.override.yaml': override}, services}
}

const merge: ResolverCase[] = [
  pair(
    'mappings merge recursively, scalars are replaced',
    'services:\n  web: {image: a, deploy: {resources: {limits: {cpus: "1"}}, replicas: 1}}\n',
    'services:\n  web: {image: b, deploy: {resources: {limits: {memory: 1g}}}}\n',
    {web: {image: 'b', deploy: {resources: {limits: {cpus: '1', memory: '1g'}}, replicas: 1}}},
  ),
  pair(
    'ports: appended, unique by {ip, target, published, protocol} across short and long syntax',
    'services:\n  web:\n    ports: ["8080:80", "127.0.0.1:9229:9229", "53:53/udp", "3000"]\n',
    'services:\n  web:\n    ports:\n      - {target: 80, published: "8080"}\n      - "9229:9229"\n      - "53:53/udp"\n      - "53:53"\n',
    {web: {ports: [{target: 80, published: '8080'}, '127.0.0.1:9229:9229', '53:53/udp', '3000', '9229:9229', '53:53']}},
  ),
  pair(
    "volumes: unique by target; the override's entry replaces the base's in place",
    'services:\n  db:\n    volumes: ["data:/var/lib/db", "./conf:/etc/db:ro", /tmp/x]\nvolumes: {data: {}, other: {}}\n',
    'services:\n  db:\n    volumes:\n      - other:/var/lib/db\n      - {type: bind, source: ./logs, target: /logs}\n',
    {
      db: {
        volumes: [
          'other:/var/lib/db',
          '$DIR/conf:/etc/db:ro',
          '/tmp/x',
          {type: 'bind', source: '$DIR/logs', target: '/logs'},
        ],
      },
    },
  ),
  pair(
    'environment and labels: merged as mappings whatever form each file uses; values become strings',
    'services:\n  web:\n    environment: [A=1, B=2, "C=x=y"]\n    labels: {com.example.a: "1", flag: true}\n',
    'services:\n  web:\n    environment: {B: 3, D: true}\n    labels: [com.example.b=2, flag=false]\n',
    {
      web: {
        environment: {A: '1', B: '3', C: 'x=y', D: 'true'},
        labels: {'com.example.a': '1', flag: 'false', 'com.example.b': '2'},
      },
    },
  ),
  {
    rule: "environment: a bare KEY in an override replaces the base's value with the environment's (dropped when unset)",
    files: {
      'compose.yaml': 'services:\n  web: {image: a, environment: {FOO: base, GONE: base, KEPT: base}}\n',
      'compose.override.yaml': 'services:\n  web: {environment: [FOO, GONE]}\n',
    },
    input: {env: {FOO: 'shell'}},
    services: {web: {image: 'a', environment: {FOO: 'shell', KEPT: 'base'}}},
  },
  pair(
    'command, entrypoint and healthcheck.test are replaced; other sequences append',
    'services:\n  web:\n    command: [a, b]\n    entrypoint: /x\n    healthcheck: {test: [CMD, a], interval: 5s}\n    dns: [1.1.1.1]\n    cap_add: [NET_ADMIN]\n',
    'services:\n  web:\n    command: [c]\n    entrypoint: [/y]\n    healthcheck: {test: [CMD, b]}\n    dns: 8.8.8.8\n    cap_add: [NET_ADMIN, SYS_TIME]\n',
    {
      web: {
        command: ['c'],
        entrypoint: ['/y'],
        healthcheck: {test: ['CMD', 'b'], interval: '5s'},
        dns: ['1.1.1.1', '8.8.8.8'],
        cap_add: ['NET_ADMIN', 'SYS_TIME'],
      },
    },
  ),
  pair(
    'depends_on and networks: list and mapping forms merge as mappings',
    'services:\n  web:\n    depends_on: [db]\n    networks: [front]\n  db: {image: db}\n  cache: {image: cache}\nnetworks: {front: {}, back: {}}\n',
    'services:\n  web:\n    depends_on: {cache: {condition: service_healthy}}\n    networks: {back: {aliases: [api]}}\n',
    {
      web: {
        depends_on: {db: {condition: 'service_started', required: true}, cache: {condition: 'service_healthy'}},
        networks: {front: null, back: {aliases: ['api']}},
      },
      db: {image: 'db'},
      cache: {image: 'cache'},
    },
  ),
  pair(
    'build: a string context merges with a mapping',
    'services:\n  web:\n    build: ./app\n',
    'services:\n  web:\n    build: {dockerfile: Dockerfile.dev, args: [A=1]}\n',
    {web: {build: {context: '$DIR/app', dockerfile: 'Dockerfile.dev', args: {A: '1'}}}},
  ),
  pair(
    '!reset removes what the base set; !override replaces it instead of merging',
    'services:\n  web:\n    image: a\n    ports: ["8080:80"]\n    environment: {FOO: bar, KEEP: "1"}\n    volumes: [./x:/x]\n    labels: {a: "1"}\n',
    'services:\n  web:\n    ports: !reset []\n    environment:\n      FOO: !reset null\n    volumes: !override\n      - ./y:/y\n',
    {web: {image: 'a', environment: {KEEP: '1'}, volumes: ['$DIR/y:/y'], labels: {a: '1'}}},
  ),
  {
    rule: 'networks: IPAM pools merge by subnet, other pools are added',
    files: {
      'compose.yaml':
        'services: {}\nnetworks:\n  back:\n    ipam: {config: [{subnet: 10.1.0.0/24, gateway: 10.1.0.1}]}\n',
      'compose.override.yaml':
        'networks:\n  back:\n    ipam: {config: [{subnet: 10.1.0.0/24, ip_range: 10.1.0.0/25}, {subnet: 10.2.0.0/24}]}\n',
    },
    model: {
      services: {},
      networks: {
        back: {
          ipam: {
            config: [{subnet: '10.1.0.0/24', gateway: '10.1.0.1', ip_range: '10.1.0.0/25'}, {subnet: '10.2.0.0/24'}],
          },
        },
      },
    },
  },
  {
    rule: 'merge: a mapping over a sequence is an InputError naming the file and key',
    files: {
      'compose.yaml': 'services:\n  web: {cap_add: [NET_ADMIN]}\n',
      'compose.override.yaml': 'services:\n  web: {cap_add: {a: 1}}\n',
    },
    error: /compose\.override\.yaml: cannot override services\.web\.cap_add/,
  },
]

const profileFiles = {
  'compose.yaml': `
services:
  foo: {image: foo}
  bar: {image: bar, profiles: [test]}
  baz: {image: baz, profiles: [test], depends_on: [bar]}
  zot: {image: zot, profiles: [debug], depends_on: [bar]}
  opt: {image: opt, profiles: [debug], depends_on: {bar: {condition: service_started, required: false}}}
`,
}

const profiles: ResolverCase[] = [
  {rule: 'profiles: none enabled → only services without profiles', files: profileFiles, check: only('foo')},
  {
    rule: 'profiles: COMPOSE_PROFILES enables a profile',
    files: profileFiles,
    input: {env: {COMPOSE_PROFILES: 'test'}},
    check: only('foo', 'bar', 'baz'),
  },
  {
    rule: 'profiles: COMPOSE_PROFILES from .env, plus [stack] profiles',
    files: {...profileFiles, '.env': 'COMPOSE_PROFILES=debug\n'},
    input: {profiles: ['test']},
    check: only('foo', 'bar', 'baz', 'zot', 'opt'),
  },
  {
    rule: 'profiles: active services lose their profiles key, so the provider runs every service of the rendered file',
    files: profileFiles,
    input: {profiles: ['test']},
    services: {foo: {image: 'foo'}, bar: {image: 'bar'}, baz: {image: 'baz', depends_on: ['bar']}},
  },
  {
    rule: 'profiles: * enables all',
    files: profileFiles,
    input: {profiles: ['*']},
    check: only('foo', 'bar', 'baz', 'zot', 'opt'),
  },
  {
    rule: 'profiles: an active service that depends on an inactive one is an InputError naming both and the profile',
    files: {
      'compose.yaml':
        'services:\n  bar: {image: bar, profiles: [test]}\n  zot: {image: zot, profiles: [debug], depends_on: [bar]}\n',
    },
    input: {profiles: ['debug']},
    error: /service zot needs service bar \(depends_on\), which is only in profile test/,
  },
  {
    rule: 'profiles: a depends_on with required: false on an inactive service is dropped',
    files: {
      'compose.yaml':
        'services:\n  bar: {image: bar, profiles: [test]}\n  opt: {image: opt, depends_on: {bar: {condition: service_started, required: false}}}\n',
    },
    services: {opt: {image: 'opt', depends_on: {}}},
  },
]

function only(...names: string[]): ResolverCase['check'] {
  return (result) => {
    const actual = Object.keys(result.model.services).sort().join(',')
    if (actual !== [...names].sort().join(',')) throw new Error(`services ${actual}, expected ${names.join(',')}`)
  }
}

const references: ResolverCase[] = [
  {
    rule: 'references: a depends_on on an undefined service is an InputError naming both',
    files: {'compose.yaml': 'services:\n  web: {image: a, depends_on: [nope]}\n'},
    error: /service web depends on undefined service nope \(depends_on\)/,
  },
  {
    rule: 'references: an optional depends_on on an undefined service is dropped',
    files: {
      'compose.yaml':
        'services:\n  web: {image: a, depends_on: {nope: {condition: service_started, required: false}}}\n',
    },
    services: {web: {image: 'a', depends_on: {}}},
  },
  {
    rule: 'references: an undeclared network, named volume or secret is an InputError (binds, anonymous volumes and default are fine)',
    files: {
      'compose.yaml':
        'services:\n  web:\n    image: a\n    networks: [default]\n    volumes: [./x:/x, /anon, "~/h:/h", data:/data]\n',
    },
    error: /service web refers to undefined volume data/,
  },
  {
    rule: 'references: network_mode service: of an undefined service is an InputError',
    files: {'compose.yaml': 'services:\n  web: {image: a, network_mode: "service:vpn"}\n'},
    error: /service web depends on undefined service vpn \(network_mode\)/,
  },
]

describe('compose resolver: merge rules and profiles', () => {
  after(cleanupTemp)

  describe('merge', () => runCases(merge))

  describe('profiles', () => runCases(profiles))

  describe('references', () => runCases(references))
})
