/**
 * `yard doctor` in a checkout (DESIGN.md §4.2, §8): what its stack's isolation report refuses
 * (`yard up` would exit 3) and what stays shared, without starting anything.
 */
import type {DoctorCheck} from '../host/doctor.js'
import type {Backends} from '../registry/backends.js'

import {InputError} from '../../sdk/errors.js'
import {findMainCheckout, resolveTarget} from '../workspace/workspace.js'
import {stackPlanOf} from './stack.js'

/** The check: `fail` for each refusal (with its way out), `warn` for what stays shared. */
export function stackIsolationCheck(backends: Backends): DoctorCheck {
  return {
    name: 'stack isolation',
    async run(context) {
      try {
        await findMainCheckout(context)
      } catch (error) {
        if (error instanceof InputError) return {level: 'ok', detail: 'no project here: nothing to check'}
        throw error
      }

      let resolved: Awaited<ReturnType<typeof resolveTarget>>
      try {
        resolved = await resolveTarget(context)
      } catch (error) {
        // Config errors are the config check's; a directory that is no checkout yard knows has no stack.
        if (error instanceof InputError)
          return {level: 'ok', detail: `no checkout of yard's here (${error.message}): nothing to check`}
        throw error
      }

      const {workspace, target} = resolved
      const plan = await stackPlanOf(context, backends, workspace, target)
      if (!plan) return {level: 'ok', detail: `${target.name}: no compose file (box-only)`}
      const refused = plan.report.filter((entry) => entry.kind === 'refused')
      const shared = plan.report.filter((entry) => entry.kind === 'shared')
      const name = (entry: {service: string | null}) => entry.service ?? plan.project
      if (refused.length > 0) {
        return {
          level: 'fail',
          detail: `${target.name}: yard up refuses ${refused.map((entry) => `${name(entry)} (${entry.detail})`).join('; ')}`,
          fix: refused.map((entry) => `${name(entry)}: ${entry.action}`).join('; '),
        }
      }

      if (shared.length > 0)
        return {
          level: 'warn',
          detail: `${target.name}: shared by every checkout: ${shared.map((entry) => `${name(entry)} ${entry.detail}`).join('; ')}`,
          fix: 'see `yard up --dry-run` for the isolation report',
        }
      return {
        level: 'ok',
        detail: `${target.name} (${plan.project}): ${Object.keys(plan.compose.services ?? {}).length} services, nothing refused or shared`,
      }
    },
  }
}
