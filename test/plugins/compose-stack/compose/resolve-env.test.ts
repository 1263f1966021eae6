/**
 * The compose resolver, table-driven: interpolation and its precedence with yard's variables
 * winning (compose specification, "Interpolation"; DESIGN.md §4.2), per-service `env_file`,
 * and relative paths made absolute.
 */
import {expect} from 'chai'

import {cleanupTemp} from '../../../support/repo.js'
import {HOME, type ResolverCase, runCases} from './resolve-support.js'

const interpolation: ResolverCase[] = [
  {
    rule: "precedence: shell env over .env; yard's variables over both, and a .env that sets one is a warning naming file and key",
    files: {
      '.env': 'WEB_PORT=1111\nTAG=from-dotenv\nONLY_DOTENV=d\nCOMPOSE_PROJECT_NAME=mine\nYARD_OFFSET=9\n',
      'compose.yaml':
        'services:\n  web:\n    image: "web:${TAG}"\n    ports: ["${WEB_PORT:-8080}:80"]\n    environment: {D: $ONLY_DOTENV, P: "${COMPOSE_PROJECT_NAME}", O: "${YARD_OFFSET:-none}"}\n',
    },
    input: {env: {TAG: 'from-shell', WEB_PORT: '2222'}, yardEnv: {WEB_PORT: '8059', COMPOSE_PROJECT_NAME: 'app-feat'}},
    services: {web: {image: 'web:from-shell', ports: ['8059:80'], environment: {D: 'd', P: 'app-feat', O: 'none'}}},
    warnings: [
      'yard-variable-in-env-file WEB_PORT',
      'yard-variable-in-env-file COMPOSE_PROJECT_NAME',
      'yard-variable-in-env-file YARD_OFFSET',
    ],
    check(result) {
      expect(result.interpolationEnv).to.include({
        WEB_PORT: '8059',
        TAG: 'from-shell',
        ONLY_DOTENV: 'd',
        COMPOSE_PROJECT_NAME: 'app-feat',
      })
      expect(result.interpolationEnv).to.not.have.property('YARD_OFFSET')
      expect(result.warnings[0].file).to.match(/\.env$/)
    },
  },
  {
    rule: "precedence: the checkout's .env over the project directory's, when COMPOSE_FILE points elsewhere (docker compose TestComposeFileSetByDotEnv)",
    files: {
      '.env': 'COMPOSE_FILE="${COMPOSE_FILE:-development/compose.yaml}"\nIMAGE_NAME=test\nCOMPOSE_PROFILES=test\n',
      'development/.env': 'IMAGE_NAME="${IMAGE_NAME:-backend}"\nIMAGE_TAG="${IMAGE_TAG:-latest}"\n',
      'development/compose.yaml':
        'services:\n  backend:\n    image: $IMAGE_NAME:$IMAGE_TAG\n  test:\n    profiles: [test]\n    image: enabled:profile\n',
    },
    services: {backend: {image: 'test:latest'}, test: {image: 'enabled:profile'}},
  },
  {
    rule: 'profiles: an unset COMPOSE_PROFILES enables the empty profile, as compose-go splits it (profiles: ["", x] runs by default); a named one alone does not',
    files: {
      'compose.yaml':
        'services:\n  web: {image: web}\n  db:\n    profiles: ["", postgresql]\n    image: db\n  debug:\n    profiles: [debug]\n    image: debug\n',
    },
    services: {web: {image: 'web'}, db: {image: 'db'}},
  },
  {
    rule: 'profiles: builtImages names the images of services a profile left out too',
    files: {
      '.env': 'COMPOSE_PROFILES=demo\n',
      'compose.yaml':
        'services:\n  build:\n    build: .\n    image: local/demo:latest\n    profiles: [build]\n  demo:\n    image: local/demo:latest\n    profiles: [demo]\n',
    },
    services: {demo: {image: 'local/demo:latest'}},
    check: (result) => expect(result.builtImages).to.deep.equal(['local/demo:latest']),
  },
  {
    rule: 'profiles: COMPOSE_PROFILES=debug enables debug alone, not the empty profile',
    files: {
      '.env': 'COMPOSE_PROFILES=debug\n',
      'compose.yaml':
        'services:\n  web: {image: web}\n  db:\n    profiles: ["", postgresql]\n    image: db\n  debug:\n    profiles: [debug]\n    image: debug\n',
    },
    services: {web: {image: 'web'}, debug: {image: 'debug'}},
  },
  {
    rule: "build.args: a bare arg takes the project environment's value (.env included), as docker compose gives it at build time; unset ones stay bare",
    files: {
      '.env': 'SENTRY_IMAGE=getsentry/sentry:nightly\n',
      'compose.yaml':
        'services:\n  web:\n    build:\n      context: .\n      args: [SENTRY_IMAGE, UNSET_ARG, FIXED=1]\n',
    },
    services: {
      web: {build: {context: '$DIR', args: {SENTRY_IMAGE: 'getsentry/sentry:nightly', UNSET_ARG: null, FIXED: '1'}}},
    },
  },
  {
    rule: 'precedence: a yard variable given as undefined is unset, whatever the shell and .env say (WORKTREE in main)',
    files: {'.env': 'WORKTREE=from-dotenv\n', 'compose.yaml': 'services:\n  web: {image: "app:${WORKTREE:-main}"}\n'},
    input: {env: {WORKTREE: 'feat'}, yardEnv: {WORKTREE: undefined}},
    services: {web: {image: 'app:main'}},
    warnings: ['yard-variable-in-env-file WORKTREE'],
  },
  {
    rule: 'syntax: $$, unbraced $VAR, defaults (- and :-), alternatives (+ and :+), nested defaults; keys stay as written',
    files: {
      'compose.yaml': `
services:
  web:
    image: app
    command: ["echo $$HOME $\${X}", "$SET-$EMPTY.", "\${EMPTY-d}|\${EMPTY:-d}|\${UNSET-d}", "\${SET+a}|\${EMPTY:+a}|\${UNSET+a}", "\${UNSET:-\${SET:-x}-y}", "cost: $5"]
    labels:
      "$SET": v
`,
    },
    input: {env: {SET: 's', EMPTY: ''}},
    services: {
      web: {image: 'app', command: ['echo $HOME ${X}', 's-.', '|d|d', 'a||', 's-y', 'cost: $5'], labels: {$SET: 'v'}},
    },
  },
  {
    rule: 'syntax: ${VAR:?message} of an unset variable is an InputError naming file, key and variable',
    files: {'compose.yaml': 'services:\n  db:\n    image: "pg:${PG_TAG:?set PG_TAG}"\n'},
    error: /compose\.yaml: services\.db\.image: required variable PG_TAG is missing a value: set PG_TAG/,
  },
  {
    rule: 'syntax: a malformed ${ is an InputError',
    files: {'compose.yaml': 'services:\n  db:\n    image: "pg:${PG TAG}"\n'},
    error: /services\.db\.image: invalid interpolation format/,
  },
  {
    rule: 'an unset variable without default is empty, with one warning',
    files: {'compose.yaml': 'services:\n  a: {image: "a${NOPE}"}\n  b: {image: "b${NOPE}"}\n'},
    services: {a: {image: 'a'}, b: {image: 'b'}},
    warnings: ['unset-variable services.a.image'],
  },
  {
    rule: 'typed attributes are cast after interpolation (booleans, integers)',
    files: {
      'compose.yaml':
        'services:\n  web:\n    image: a\n    privileged: "${PRIV}"\n    ports: [{target: "${T}", published: "8080"}]\n',
    },
    input: {env: {PRIV: 'true', T: '80'}},
    services: {web: {image: 'a', privileged: true, ports: [{target: 80, published: '8080'}]}},
  },
]

const envFiles: ResolverCase[] = [
  {
    rule: 'env_file: read into environment (relative to the project), later files over earlier, environment over all; not used for interpolation',
    files: {
      'compose.yaml':
        'services:\n  web:\n    image: "app${FROM_FILE:-}"\n    env_file: [conf/a.env, {path: conf/b.env, required: true}, {path: conf/missing.env, required: false}]\n    environment: [OVER=env, HOME]\n',
      'conf/a.env': 'FROM_FILE=a\nOVER=a\nREF=${TAG}-x\n',
      'conf/b.env': 'FROM_FILE=b\n# comment\nexport QUOTED="two\\nlines"\n',
    },
    input: {env: {TAG: 't'}},
    services: {web: {image: 'app', environment: {FROM_FILE: 'b', OVER: 'env', REF: 't-x', QUOTED: 'two\nlines', HOME}}},
  },
  {
    rule: 'env_file: a missing required file is an InputError naming the service',
    files: {'compose.yaml': 'services:\n  web: {image: a, env_file: nope.env}\n'},
    error: /env file .*nope\.env of service web does not exist/,
  },
]

const paths: ResolverCase[] = [
  {
    rule: 'paths: build contexts, binds (short, long, ~), env_file, secrets/configs files and bind-type local volumes become absolute; dockerfile, urls and named volumes stay',
    files: {
      'proj/compose.yaml': `
services:
  web:
    build: {context: ./web, dockerfile: docker/Dockerfile}
    volumes: ["./src:/src:ro", "~/cache:/cache", "named:/named", "/abs:/abs", "/anon", {type: bind, source: ../up, target: /up}, {type: volume, source: v, target: /v}]
  remote:
    build: https://github.com/docker/compose.git#main
  ctx:
    build: {additional_contexts: {base: ../base, img: "docker-image://alpine"}}
secrets:
  token: {file: ./secrets/token}
configs:
  conf: {file: ~/conf.ini}
volumes:
  bound: {driver: local, driver_opts: {type: none, o: bind, device: ./bound}}
  named: {}
  v:
`,
    },
    checkout: 'proj',
    model: {
      services: {
        web: {
          build: {context: '$DIR/proj/web', dockerfile: 'docker/Dockerfile'},
          volumes: [
            '$DIR/proj/src:/src:ro',
            `${HOME}/cache:/cache`,
            'named:/named',
            '/abs:/abs',
            '/anon',
            {type: 'bind', source: '$DIR/up', target: '/up'},
            {type: 'volume', source: 'v', target: '/v'},
          ],
        },
        remote: {build: 'https://github.com/docker/compose.git#main'},
        ctx: {build: {context: '$DIR/proj', additional_contexts: {base: '$DIR/base', img: 'docker-image://alpine'}}},
      },
      secrets: {token: {file: '$DIR/proj/secrets/token'}},
      configs: {conf: {file: `${HOME}/conf.ini`}},
      volumes: {
        bound: {driver: 'local', driver_opts: {type: 'none', o: 'bind', device: '$DIR/proj/bound'}},
        named: {},
        v: null,
      },
    },
  },
]

describe('compose resolver: interpolation, env_file, paths', () => {
  after(cleanupTemp)

  describe('interpolation', () => runCases(interpolation))

  describe('env_file', () => runCases(envFiles))

  describe('paths', () => runCases(paths))
})
