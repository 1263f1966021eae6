/** Shared by the resolver's table tests: writes a case's fixture files and resolves them. */
import {expect} from 'chai'

import type {ResolvedProject, ResolveInput} from '../../../../src/plugins/compose-stack/compose/types.js'

import {resolveComposeProject} from '../../../../src/plugins/compose-stack/compose/resolve.js'
import {InputError} from '../../../../src/sdk/errors.js'
import {tempDir, writeFile} from '../../../support/repo.js'

/** One rule of the resolver, with its fixture and what Compose makes of it. */
export interface ResolverCase {
  rule: string
  /** Fixture files, relative to a fresh directory; `$DIR` in contents is that directory. */
  files: Record<string, string>
  /** Prepares what files cannot say (symbolic links, directories), after the files are written. */
  setup?: (dir: string) => void
  /** The checkout, relative to the fixture directory (default: the directory itself). */
  checkout?: string
  input?: Partial<Omit<ResolveInput, 'checkoutPath'>>
  /** The expected `model.services` (deep equal); `$DIR` in strings is the fixture directory. */
  services?: Record<string, unknown>
  /** The expected whole model (deep equal). */
  model?: Record<string, unknown>
  /** The expected `files`, relative to the fixture directory. */
  read?: string[]
  /** Expected warnings as `kind key` strings (exactly these). */
  warnings?: string[]
  check?: (result: ResolvedProject, dir: string) => void
  /** The resolution fails with an InputError whose message matches. */
  error?: RegExp
  /** No compose file: the resolver returns undefined. */
  boxOnly?: boolean
}

export const HOME = '/home/dev'

/** Runs a table of cases as `it`s. */
export function runCases(cases: readonly ResolverCase[]): void {
  for (const row of cases) {
    it(row.rule, async () => {
      const dir = tempDir('yard-compose')
      for (const [name, content] of Object.entries(row.files)) writeFile(dir, name, content.replaceAll('$DIR', dir))
      row.setup?.(dir)
      const input: ResolveInput = {
        checkoutPath: row.checkout ? `${dir}/${row.checkout}` : dir,
        yardEnv: {},
        ...row.input,
        env: {HOME, ...row.input?.env},
      }
      if (row.error) {
        let failure: unknown
        try {
          await resolveComposeProject(input)
        } catch (error) {
          failure = error
        }

        expect(failure, 'an InputError').to.be.instanceOf(InputError)
        expect((failure as Error).message).to.match(row.error)
        return
      }

      const result = await resolveComposeProject(input)
      if (row.boxOnly) {
        expect(result).to.equal(undefined)
        return
      }

      expect(result, 'a compose project').to.not.equal(undefined)
      const replaced = <T>(value: T): T => JSON.parse(JSON.stringify(value).replaceAll('$DIR', dir)) as T
      if (row.services) expect(result!.model.services).to.deep.equal(replaced(row.services))
      if (row.model) expect(result!.model).to.deep.equal(replaced(row.model))
      if (row.read) expect(result!.files).to.deep.equal(row.read.map((file) => `${dir}/${file}`))
      if (row.warnings)
        expect(result!.warnings.map((warning) => `${warning.kind} ${warning.key ?? ''}`.trim())).to.deep.equal(
          row.warnings,
        )
      row.check?.(result!, dir)
    })
  }
}
