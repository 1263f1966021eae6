/**
 * What the resolver refuses in a compose file as Compose does (the specification's schema and
 * its "ports" section): port entries the engine cannot publish, invalid service names, attributes
 * of the wrong type — each an InputError naming the file, the key path and the entry — and the
 * unknown top-level keys it warns about once.
 */
import {expect} from 'chai'

import {parsePublished} from '../../../../src/plugins/compose-stack/published-ports.js'
import {cleanupTemp} from '../../../support/repo.js'
import {type ResolverCase, runCases} from './resolve-support.js'

const web = (attributes: string) => ({'compose.yaml': `services:\n  web:\n    image: x\n${attributes}`})
const port = (entry: string) => web(`    ports:\n      - ${entry}\n`)

const ports: ResolverCase[] = [
  {
    rule: 'a host port above 65535 is refused',
    files: port('"70000:80"'),
    error:
      /compose\.yaml: services\.web\.ports\.0: "70000:80" is not a valid port entry: the host port 70000 is above 65535/,
  },
  {
    rule: 'a container port 0 is refused',
    files: port('"8080:0"'),
    error: /services\.web\.ports\.0: "8080:0" is not a valid port entry: the container port 0/,
  },
  {
    rule: 'host and container ranges of different lengths are refused',
    files: port('"8000-8010:80-81"'),
    error:
      /"8000-8010:80-81" is not a valid port entry: the host range 8000-8010 and the container range 80-81 differ in length/,
  },
  {
    rule: 'a range that ends before it starts is refused',
    files: port('"90-80:90-80"'),
    error: /range 90-80 ends before it starts/,
  },
  {
    rule: 'a bind address that is no IP address is refused',
    files: port('"1.2.3:80:80"'),
    error: /"1\.2\.3:80:80" is not a valid port entry: 1\.2\.3 is not an IP address/,
  },
  {
    rule: 'an unknown protocol is refused',
    files: port('"80:80/http"'),
    error: /the protocol "http" is not tcp, udp or sctp/,
  },
  {
    rule: 'a boolean entry is refused',
    files: port('true'),
    error: /services\.web\.ports\.0: true is not a valid port entry: a port entry is a string, a number or a mapping/,
  },
  {
    rule: 'a list entry is refused',
    files: port('[80, 80]'),
    error: /services\.web\.ports\.0: .* a port entry is a string, a number or a mapping, not a list/,
  },
  {rule: 'a number entry out of range is refused', files: port('70000'), error: /70000 is not a container port/},
  {
    rule: 'long syntax: a published that is no port is refused',
    files: port('{target: 80, published: abc}'),
    error: /`published` "abc" is not a port number or range/,
  },
  {
    rule: 'long syntax: a missing target is refused',
    files: port('{published: 8080}'),
    error: /the long syntax needs `target`/,
  },
  {
    rule: 'long syntax: a target above 65535 is refused',
    files: port('{target: 70000, published: 8080}'),
    error: /`target` 70000 is above 65535/,
  },
  {
    rule: 'long syntax: a host_ip that is no IP address is refused',
    files: port('{target: 80, published: 8080, host_ip: localhost}'),
    error: /`host_ip` "localhost" is not an IP address/,
  },
  {
    rule: 'an interpolated port that is no port is refused after interpolation',
    files: {...port('"${WEB_PORT}:80"'), '.env': 'WEB_PORT=http\n'},
    error: /"http:80" is not a valid port entry: the host port "http" is not a port number or range/,
  },
  {
    rule: "valid entries pass: 0 (the engine picks), an empty bind address or host port (supabase's unset ${KONG_HTTP_PORT}:8000/tcp), unbracketed IPv6 before the two ports, ranges, udp, long syntax",
    files: web(
      '    ports: ["0:80", ":443:443", ":8000/tcp", "::1:5432:5432", "[::1]:5433:5433", "8000-8010:8000-8010", "9000-9010:90", "51820:51820/udp", 5000, {target: 81, published: "8081", host_ip: "127.0.0.1", protocol: udp, mode: host}]\n',
    ),
    check(result) {
      expect(result.model.services.web.ports).to.have.length(10)
      expect(parsePublished(':443:443'), "an empty bind address is none (mailcow's ${HTTPS_BIND:-})").to.deep.include({
        hostIp: undefined,
        host: {start: 443, end: 443},
      })
      expect(parsePublished('::1:5432:5432')).to.deep.include({
        hostIp: '[::1]',
        host: {start: 5432, end: 5432},
        container: {start: 5432, end: 5432},
      })
      expect(parsePublished('0:80')).to.deep.include({host: undefined}, 'host port 0: the engine picks')
    },
  },
]

const names: ResolverCase[] = [
  {
    rule: 'a service name starting with a dot is refused',
    files: {'compose.yaml': 'services:\n  .web: {image: x}\n'},
    error: /compose\.yaml: services\."\.web" is not a valid service name/,
  },
  {
    rule: 'a service name with a space is refused, with a valid one proposed',
    files: {'compose.yaml': 'services:\n  "web app": {image: x}\n'},
    error: /services\."web app" is not a valid service name/,
  },
  {
    rule: 'a service name in an override file is checked too',
    files: {
      'compose.yaml': 'services: {web: {image: x}}\n',
      'compose.override.yaml': 'services:\n  "db/1": {image: x}\n',
    },
    error: /compose\.override\.yaml: services\."db\/1" is not a valid service name/,
  },
  {
    rule: 'letters, digits, _, . and - pass',
    files: {'compose.yaml': 'services:\n  Web.1_a-b: {image: x}\n  2db: {image: y}\n'},
    services: {'Web.1_a-b': {image: 'x'}, '2db': {image: 'y'}},
  },
]

const topLevel: ResolverCase[] = [
  {
    rule: 'an unknown top-level key is a warning with the likely key, said once when the file is included twice',
    files: {
      'compose.yaml': 'include: [a.yaml, b.yaml]\nservices: {top: {image: x}}\n',
      'a.yaml': 'include: [typo.yaml]\n',
      'b.yaml': 'include: [typo.yaml]\n',
      'typo.yaml': 'service:\n  db: {image: x}\nvolume: {}\nx-fine: 1\nfoo: 1\n',
    },
    warnings: ['unknown-key service', 'unknown-key volume', 'unknown-key foo'],
    check(result) {
      expect(result.warnings[0].message).to.match(
        /typo\.yaml: unknown top-level key `service` \(did you mean `services`\?\); it is ignored/,
      )
      expect(result.warnings[1].message).to.include('did you mean `volumes`?')
      expect(result.warnings[2].message).to.not.include('did you mean')
    },
  },
  {
    rule: "the specification's keys and x-* pass without a word",
    files: {
      'compose.yaml':
        'version: "3"\nname: p\nservices: {a: {image: x}}\nnetworks: {}\nvolumes: {}\nsecrets: {}\nconfigs: {}\nmodels: {}\nx-any: 1\n',
    },
    warnings: [],
  },
]

const types: ResolverCase[] = [
  {
    rule: 'profiles as a string is refused (it would be ignored)',
    files: web('    profiles: debug\n'),
    error:
      /compose\.yaml: services\.web\.profiles must be a list of profile names, e\.g\. `profiles: \[debug\]`, not string "debug"/,
  },
  {
    rule: 'container_name as a number is refused',
    files: web('    container_name: 5\n'),
    error: /services\.web\.container_name must be a string .*, not number 5/,
  },
  {
    rule: 'container_name with a slash is refused',
    files: web('    container_name: a/b\n'),
    error: /services\.web\.container_name must be a string/,
  },
  {
    rule: 'image as a list is refused',
    files: {'compose.yaml': 'services:\n  web:\n    image: [a]\n'},
    error: /services\.web\.image must be a string, e\.g\. `image: postgres:16`, not a list/,
  },
  {
    rule: 'ports as a string is refused',
    files: web('    ports: "80:80"\n'),
    error: /services\.web\.ports must be a list of port entries/,
  },
  {
    rule: 'a volumes entry as a number is refused, naming the entry',
    files: web('    volumes: [./a:/a, 5]\n'),
    error: /services\.web\.volumes must be .* \(at services\.web\.volumes\.1\), not a list/,
  },
  {
    rule: 'a long-syntax volume without type is refused',
    files: web('    volumes: [{source: a, target: /a}]\n'),
    error: /services\.web\.volumes must be/,
  },
  {
    rule: 'networks as a string is refused',
    files: web('    networks: front\n'),
    error: /services\.web\.networks must be a list of network names or a mapping/,
  },
  {
    rule: 'network_mode as a number is refused',
    files: web('    network_mode: 1\n'),
    error: /services\.web\.network_mode must be a string/,
  },
  {
    rule: 'env_file as a number is refused',
    files: web('    env_file: 5\n'),
    error: /services\.web\.env_file must be a path or a list/,
  },
  {
    rule: 'extends with an unknown key is refused',
    files: {'compose.yaml': 'services:\n  base: {image: x}\n  web:\n    extends: {service: base, fil: other.yaml}\n'},
    error: /services\.web\.extends must be a service name or `\{service, file\}`/,
  },
  {
    rule: 'depends_on as a string is refused',
    files: web('    depends_on: db\n'),
    error: /services\.web\.depends_on must be a list of service names or a mapping/,
  },
  {
    rule: 'depends_on with an unknown condition is refused',
    files: {
      'compose.yaml': 'services:\n  db: {image: x}\n  web:\n    image: x\n    depends_on: {db: {condition: started}}\n',
    },
    error: /services\.web\.depends_on must be .* \(at services\.web\.depends_on\.db\.condition\)/,
  },
  {
    rule: 'environment as a number is refused',
    files: web('    environment: 5\n'),
    error: /services\.web\.environment must be a list of `KEY=VALUE` strings or a mapping/,
  },
  {
    rule: 'a type error in an extends file names that file',
    files: {
      'compose.yaml': 'services:\n  web:\n    extends: {file: base.yaml, service: base}\n',
      'base.yaml': 'services:\n  base: {image: x, profiles: debug}\n',
    },
    error: /base\.yaml: services\.base\.profiles must be a list/,
  },
  {
    rule: 'well-typed attributes pass (both forms of networks, depends_on, env_file, build)',
    files: {
      'compose.yaml':
        'services:\n  db: {image: x, networks: [back], profiles: [a, b]}\n  web:\n    build: .\n    container_name: my-web.1\n    networks: {back: null, front: {aliases: [w]}}\n    depends_on: {db: {condition: service_healthy, required: false}}\n    env_file: [{path: ./missing.env, required: false}]\n    volumes: [./a:/a, {type: tmpfs, target: /t}]\nnetworks: {back: {}, front: {}}\n',
      'compose.override.yaml': 'services:\n  worker: {image: y, depends_on: [web]}\n',
    },
    input: {profiles: ['a']},
    check: (result) => expect(Object.keys(result.model.services)).to.deep.equal(['db', 'web', 'worker']),
  },
]

describe('compose resolver: what Compose refuses in a file', () => {
  after(() => cleanupTemp())

  describe('ports (compose specification, "ports")', () => runCases(ports))

  describe('service names', () => runCases(names))

  describe('top-level keys', () => runCases(topLevel))

  describe('types of the attributes yard reads', () => runCases(types))
})
