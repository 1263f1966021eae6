/**
 * The compose resolver, table-driven, one fixture per rule: YAML as Compose reads it, which
 * files make the project, `include` and `extends` (compose specification; compose-go's loader).
 */
import {cleanupTemp} from '../../../support/repo.js'
import {type ResolverCase, runCases} from './resolve-support.js'

const yaml: ResolverCase[] = [
  {
    rule: 'YAML: anchors, merge keys (one and a list) from x- fragments; explicit keys win; x- fields removed everywhere',
    files: {
      'compose.yaml': `
x-base: &base
  image: base
  restart: always
  environment: &env
    TZ: UTC
x-logging: &logging
  logging: {driver: json-file}
  restart: "no"
services:
  web:
    <<: [*base, *logging]
    image: web
    x-owner: team-a
  worker:
    <<: *base
    environment:
      <<: *env
      QUEUE: jobs
x-trailer: 1
`,
    },
    model: {
      services: {
        web: {image: 'web', restart: 'always', environment: {TZ: 'UTC'}, logging: {driver: 'json-file'}},
        worker: {image: 'base', restart: 'always', environment: {TZ: 'UTC', QUEUE: 'jobs'}},
      },
    },
  },
  {
    rule: 'YAML: an alias refers to the closest anchor of its name before it',
    files: {
      'compose.yaml': 'services:\n  first: &d {image: one}\n  second: *d\n  third: &d {image: two}\n  fourth: *d\n',
    },
    services: {first: {image: 'one'}, second: {image: 'one'}, third: {image: 'two'}, fourth: {image: 'two'}},
  },
  {
    rule: 'YAML: an error names the file, line and column',
    files: {'compose.yaml': 'services:\n  web:\n    image: a\n    image: b\n'},
    error: /compose\.yaml:4:5: services\.web: the key "image" is defined twice/,
  },
  {
    rule: "YAML: a plain 0440 is octal, as Compose's Go YAML reads file modes; quoted it stays a string",
    files: {
      'compose.yaml':
        'services:\n  web:\n    image: a\n    secrets: [{source: s, mode: 0440}]\n    labels: {m: "0440"}\nsecrets:\n  s: {file: ./s}\n',
    },
    services: {web: {image: 'a', secrets: [{source: 's', mode: 0o440}], labels: {m: '0440'}}},
  },
  {
    rule: 'YAML: several documents in one file merge in order',
    files: {'compose.yaml': 'services:\n  web: {image: a, ports: ["80:80"]}\n---\nservices:\n  web: {image: b}\n'},
    services: {web: {image: 'b', ports: ['80:80']}},
  },
]

const discovery: ResolverCase[] = [
  {
    rule: 'files: no compose file → box-only (undefined)',
    files: {README: 'x', 'sub/compose.yaml': 'services: {}\n'},
    boxOnly: true,
  },
  {
    rule: 'files: compose.yaml plus compose.override.yaml, merged in that order',
    files: {
      'compose.yaml': 'services:\n  web: {image: a, environment: {A: "1"}}\n',
      'compose.override.yaml': 'services:\n  web: {environment: {B: "2"}}\n',
      'docker-compose.override.yml': 'services:\n  web: {image: never}\n',
    },
    read: ['compose.yaml', 'compose.override.yaml'],
    services: {web: {image: 'a', environment: {A: '1', B: '2'}}},
  },
  {
    rule: 'files: docker-compose.yml before docker-compose.yaml, with its docker-compose.override.yml, and a warning that both exist',
    files: {
      'docker-compose.yml': 'services:\n  web: {image: yml}\n',
      'docker-compose.yaml': 'services:\n  web: {image: yaml}\n',
      'docker-compose.override.yml': 'services:\n  web: {command: ["x"]}\n',
    },
    read: ['docker-compose.yml', 'docker-compose.override.yml'],
    services: {web: {image: 'yml', command: ['x']}},
    warnings: ['multiple-compose-files'],
  },
  {
    rule: "files: COMPOSE_FILE from the checkout's .env, split on COMPOSE_PATH_SEPARATOR; the project directory is the first file's",
    files: {
      '.env': 'COMPOSE_FILE=deploy/base.yml;deploy/dev.yml\nCOMPOSE_PATH_SEPARATOR=;\n',
      'compose.yaml': 'services:\n  never: {image: x}\n',
      'deploy/base.yml': 'services:\n  web: {image: base, build: ./ctx}\n',
      'deploy/dev.yml': 'services:\n  web: {image: dev}\n',
    },
    read: ['deploy/base.yml', 'deploy/dev.yml'],
    services: {web: {image: 'dev', build: '$DIR/deploy/ctx'}},
    check(result, dir) {
      if (result.projectDirectory !== `${dir}/deploy`) throw new Error(`project directory ${result.projectDirectory}`)
    },
  },
  {
    rule: 'files: COMPOSE_FILE of the environment wins over the .env one',
    files: {
      '.env': 'COMPOSE_FILE=a.yml\n',
      'a.yml': 'services:\n  a: {image: a}\n',
      'b.yml': 'services:\n  b: {image: b}\n',
    },
    input: {env: {COMPOSE_FILE: 'b.yml'}},
    services: {b: {image: 'b'}},
  },
  {
    rule: 'files: [stack] files win over COMPOSE_FILE and the defaults',
    files: {'compose.yaml': 'services:\n  a: {image: a}\n', 'stack/one.yml': 'services:\n  one: {image: one}\n'},
    input: {configuredFiles: ['stack/one.yml'], env: {COMPOSE_FILE: 'compose.yaml'}},
    services: {one: {image: 'one'}},
  },
  {
    rule: 'files: a missing [stack] file is an InputError naming it and where it was set',
    files: {'compose.yaml': 'services: {}\n'},
    input: {configuredFiles: ['nope.yml'], configuredOrigin: 'yard.local.toml'},
    error: /nope\.yml does not exist/,
  },
]

const include: ResolverCase[] = [
  {
    rule: 'include (short form): paths relative to the included file, its own .env for what the includer leaves unset (bare environment entries too)',
    files: {
      '.env': 'SHARED=from-main\n',
      'compose.yaml': 'include:\n  - lib/db.yaml\nservices:\n  web: {image: web, depends_on: [db]}\n',
      'lib/db.yaml':
        'services:\n  db:\n    image: "postgres:${PG:-15}"\n    environment: {SHARED: "${SHARED}", PG: null}\n    volumes: [./data:/var/lib/postgresql/data]\n',
      'lib/.env': 'PG=16\nSHARED=from-lib\n',
    },
    read: ['compose.yaml', 'lib/db.yaml'],
    services: {
      web: {image: 'web', depends_on: ['db']},
      db: {
        image: 'postgres:16',
        environment: {SHARED: 'from-main', PG: '16'},
        volumes: ['$DIR/lib/data:/var/lib/postgresql/data'],
      },
    },
  },
  {
    rule: 'include (long form): a list of paths merged, project_directory and env_file relative to the includer',
    files: {
      'compose.yaml':
        'include:\n  - path: [infra/cache.yaml, infra/cache.dev.yaml]\n    project_directory: infra/root\n    env_file: conf/cache.env\nservices:\n  web: {image: web}\n',
      'infra/cache.yaml':
        'services:\n  cache: {image: "redis:${REDIS}", build: ., ports: ["6379:6379"]}\nvolumes:\n  cache-data: {}\n',
      'infra/cache.dev.yaml': 'services:\n  cache: {ports: ["6380:6379"]}\n',
      'conf/cache.env': 'REDIS=7\n',
    },
    services: {
      web: {image: 'web'},
      cache: {image: 'redis:7', build: '$DIR/infra/root', ports: ['6379:6379', '6380:6379']},
    },
    check(result) {
      if (JSON.stringify(result.model.volumes) !== '{"cache-data":{}}') throw new Error('included volume missing')
    },
  },
  {
    rule: "include + extends: an included file's extends file: is relative to its project directory (compose-go testdata/combined)",
    files: {
      'compose.yaml': 'include:\n  - path: [dir/included.yaml]\n',
      'dir/included.yaml': 'services:\n  service:\n    extends: {file: extended.yaml, service: service}\n',
      'dir/extended.yaml': 'services:\n  service:\n    build: .\n',
    },
    read: ['compose.yaml', 'dir/included.yaml', 'dir/extended.yaml'],
    services: {service: {build: '$DIR/dir'}},
  },
  {
    rule: "include: a resource both define is merged, the includer's on top, with a warning",
    files: {
      'compose.yaml': 'include: [other.yaml]\nservices:\n  db: {environment: {A: "main"}}\n',
      'other.yaml': 'services:\n  db: {image: pg, environment: {A: "other", B: "other"}}\n',
    },
    services: {db: {image: 'pg', environment: {A: 'main', B: 'other'}}},
    warnings: ['include-conflict services.db'],
  },
  {
    rule: "include: the includer's !reset and !override apply to the included definition it redefines",
    files: {
      'compose.yaml':
        'include: [other.yaml]\nservices:\n  db:\n    ports: !reset []\n    environment: !override {ONLY: main}\n',
      'other.yaml': 'services:\n  db: {image: pg, ports: ["5432:5432"], environment: {A: other}}\n',
    },
    services: {db: {image: 'pg', environment: {ONLY: 'main'}}},
    warnings: ['include-conflict services.db'],
  },
  {
    rule: 'include: a cycle is an InputError',
    files: {'compose.yaml': 'include: [a.yaml]\nservices: {}\n', 'a.yaml': 'include: [compose.yaml]\n'},
    error: /include cycle: .*compose\.yaml → .*a\.yaml → .*compose\.yaml/,
  },
  {
    rule: 'include: a remote resource (oci://, a git url) is refused as one, not looked for as a path',
    files: {'compose.yaml': 'include:\n  - oci://docker.io/myorg/base:latest\nservices: {}\n'},
    error: /include oci:\/\/docker\.io\/myorg\/base:latest is a remote resource, which yard does not fetch/,
  },
  {
    rule: 'include: a git url in the long form is refused as remote too',
    files: {'compose.yaml': 'include:\n  - path: git@github.com:org/repo.git\nservices: {}\n'},
    error: /include git@github\.com:org\/repo\.git is a remote resource/,
  },
]

const extendsCases: ResolverCase[] = [
  {
    rule: 'extends (same file, string and mapping form): the service merged on its base by the merge rules',
    files: {
      'compose.yaml': `
services:
  base:
    image: app
    environment: {TZ: UTC, PORT: "80"}
    ports: ["80:80"]
    command: [serve]
  cli:
    extends: {service: base}
    environment: [PORT=8080]
    command: [run]
  short:
    extends: base
`,
    },
    services: {
      base: {image: 'app', environment: {TZ: 'UTC', PORT: '80'}, ports: ['80:80'], command: ['serve']},
      cli: {image: 'app', environment: {TZ: 'UTC', PORT: '8080'}, ports: ['80:80'], command: ['run']},
      short: {image: 'app', environment: {TZ: 'UTC', PORT: '80'}, ports: ['80:80'], command: ['serve']},
    },
  },
  {
    rule: "extends (file:, chained across files): each base's paths against its own file, file: relative to the main file",
    files: {
      'compose.yaml':
        'services:\n  web:\n    extends: {file: common/web.yaml, service: web}\n    volumes: [./src:/src]\n',
      'common/web.yaml': 'services:\n  web:\n    extends: {file: ../base/base.yaml, service: node}\n    build: .\n',
      'base/base.yaml':
        'services:\n  node:\n    image: node\n    env_file: node.env\n    volumes: [./cache:/cache, "./src-base:/src"]\n',
      'base/node.env': 'NODE_ENV=dev\n',
    },
    read: ['compose.yaml', 'common/web.yaml', 'base/base.yaml'],
    services: {
      web: {
        image: 'node',
        environment: {NODE_ENV: 'dev'},
        build: '$DIR/common',
        volumes: ['$DIR/base/cache:/cache', '$DIR/src:/src'],
      },
    },
  },
  {
    rule: "extends: a build without context inherits its base's, from the base's file (compose-go TestLoadExtendsSameFile)",
    files: {
      'compose.yaml':
        'services:\n  out-base: {extends: {file: sub/compose.yaml, service: base}}\n  out-service: {extends: {file: sub/compose.yaml, service: service}}\n  own: {build: {target: dev}}\n',
      'sub/compose.yaml':
        'services:\n  base: {build: {context: ..}}\n  service: {extends: base, build: {target: target}}\n',
    },
    services: {
      'out-base': {build: {context: '$DIR'}},
      'out-service': {build: {context: '$DIR', target: 'target'}},
      own: {build: {target: 'dev', context: '$DIR'}},
    },
  },
  {
    rule: 'extends: !reset in the extending service removes what it inherits (compose-go testdata/extends/reset.yaml)',
    files: {
      'compose.yaml':
        'services:\n  init: {image: "alpine:latest", command: "sleep infinity", ports: ["80:80"]}\n  base:\n    extends: {service: init}\n    command: !reset\n    ports: !override ["81:81"]\n',
    },
    services: {
      init: {image: 'alpine:latest', command: 'sleep infinity', ports: ['80:80']},
      base: {image: 'alpine:latest', ports: ['81:81']},
    },
  },
  {
    rule: 'extends: a cycle is an InputError',
    files: {'compose.yaml': 'services:\n  a: {extends: b}\n  b: {extends: {service: a}}\n'},
    error: /extends cycle/,
  },
  {
    rule: 'extends: a missing base service is an InputError naming it',
    files: {
      'compose.yaml': 'services:\n  a: {extends: {file: b.yaml, service: nope}}\n',
      'b.yaml': 'services:\n  b: {image: b}\n',
    },
    error: /cannot extend service "a": service "nope" not found in .*b\.yaml/,
  },
]

describe('compose resolver: YAML, files, include, extends', () => {
  after(cleanupTemp)

  describe('YAML', () => runCases(yaml))

  describe('files', () => runCases(discovery))

  describe('include', () => runCases(include))

  describe('extends', () => runCases(extendsCases))
})
