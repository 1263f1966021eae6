/**
 * Drives the FAKE `kubectl` of test/support/fake-kubectl/ (DESIGN.md §8): the env that puts it
 * first on PATH and names its call log, and the calls it recorded. How it maps `exec` and `cp`
 * onto a podman-runtime pod of the same name is described in fake-kubectl.mjs.
 */
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {projectRoot} from './oclif-config.js'
import {tempDir} from './repo.js'

export const FAKE_KUBECTL_BIN = path.join(projectRoot, 'test', 'support', 'fake-kubectl')

export interface KubectlCall {
  argv: string[]
  /** Whether the fake's stdin was a terminal. */
  stdinTTY: boolean
}

export class FakeKubectl {
  readonly log = path.join(tempDir('yard-fake-kubectl'), 'calls.jsonl')

  /** Env for `yard(args, {env})`: the fake first on PATH and its call log. */
  get env(): Record<string, string> {
    return {PATH: `${FAKE_KUBECTL_BIN}:${process.env.PATH}`, FAKE_KUBECTL_LOG: this.log}
  }

  /** Every kubectl call so far, in order. */
  calls(): KubectlCall[] {
    if (!existsSync(this.log)) return []
    return readFileSync(this.log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as KubectlCall)
  }

  /** The calls whose verb (the word after the global flags) is `verb`. */
  verb(verb: string): KubectlCall[] {
    return this.calls().filter((call) => call.argv[4] === verb)
  }

  /** Forgets the calls so far. */
  clear(): void {
    writeFileSync(this.log, '')
  }
}
