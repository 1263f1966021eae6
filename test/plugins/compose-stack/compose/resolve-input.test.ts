/**
 * What the resolver refuses before it could hang, flood its memory or crash: files that are no
 * regular files (a FIFO, a device) wherever a project names one, and services that are no mappings.
 */
import {execFileSync} from 'node:child_process'
import {mkdirSync, rmSync, symlinkSync} from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import {cleanupTemp} from '../../../support/repo.js'
import {type ResolverCase, runCases} from './resolve-support.js'

// Made in before(), not at load: other files' cleanupTemp() runs before this describe does.
const fifoDir = path.join(os.tmpdir(), `yard-fifo-${process.pid}`)
const fifo = path.join(fifoDir, 'pipe')

const cases: ResolverCase[] = [
  {
    rule: 'a service without attributes (null) is invalid input, not a crash',
    files: {'compose.yaml': 'services:\n  web:\n'},
    error: /service web of .*compose\.yaml is not a mapping/,
  },
  {
    rule: 'a service given as a scalar is invalid input, not a crash',
    files: {'compose.yaml': 'services:\n  web: nginx\n'},
    error: /service web of .*compose\.yaml is not a mapping/,
  },
  {
    rule: 'an env_file that is a FIFO is refused, never read (it would block forever)',
    files: {'compose.yaml': `services:\n  web:\n    image: x\n    env_file: ${fifo}\n`},
    error: /the env file .*pipe is not a regular file/,
  },
  {
    rule: 'an env_file that is a device is refused (/dev/zero would fill the memory)',
    files: {'compose.yaml': 'services:\n  web:\n    image: x\n    env_file: /dev/zero\n'},
    error: /the env file \/dev\/zero is not a regular file/,
  },
  {
    rule: 'an included file that is a FIFO is refused',
    files: {'compose.yaml': `include:\n  - ${fifo}\nservices:\n  a:\n    image: x\n`},
    error: /the compose file .*pipe is not a regular file/,
  },
  {
    rule: 'a compose.yaml that is a directory is an error, not a box-only checkout',
    files: {README: ''},
    setup: (dir) => mkdirSync(`${dir}/compose.yaml`),
    error: /compose\.yaml is not a readable compose file/,
  },
  {
    rule: 'a compose.yaml that is a dangling symbolic link is an error naming its target',
    files: {README: ''},
    setup: (dir) => symlinkSync('gone.yaml', `${dir}/compose.yaml`),
    error: /compose\.yaml is not a readable compose file/,
  },
  {
    rule: 'an override file name that is a directory is an error, not silently dropped',
    files: {'compose.yaml': 'services: {a: {image: x}}\n'},
    setup: (dir) => mkdirSync(`${dir}/compose.override.yaml`),
    error: /compose\.override\.yaml is not a readable compose file/,
  },
  {
    rule: 'a compose.yaml that is a symbolic link to a regular file is read',
    files: {'real.yaml': 'services: {a: {image: x}}\n'},
    setup: (dir) => symlinkSync('real.yaml', `${dir}/compose.yaml`),
    services: {a: {image: 'x'}},
  },
  {
    rule: 'an extends file that is a device is refused',
    files: {'compose.yaml': 'services:\n  a:\n    extends:\n      file: /dev/zero\n      service: b\n'},
    error: /the compose file \/dev\/zero is not a regular file/,
  },
]

describe('compose resolver: inputs that are no files or no services (compose specification)', () => {
  before(() => {
    mkdirSync(fifoDir, {recursive: true})
    execFileSync('mkfifo', [fifo])
  })

  after(() => {
    rmSync(fifoDir, {recursive: true, force: true})
    cleanupTemp()
  })
  runCases(cases)
})
