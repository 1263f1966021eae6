/** `cache_list` and `doctor`: `yard cache list` and `yard doctor` (DESIGN.md §5.1, Appendix A). */
import {z} from 'zod'

import {openCache} from '../cache/cache.js'
import {runDoctor} from '../host/doctor.js'
import {count, defineTool} from './tool.js'

export const cacheList = defineTool({
  name: 'cache_list',
  title: 'List the git caches',
  description:
    'yard cache list: the bare git caches sandboxes borrow. structuredContent: {caches: [the `cache list --json` rows: key, identity, url, path, present, lastFetched, lastError, stale, packs, looseObjects, sizeBytes, borrowers]}.',
  input: z.object({}).strict(),
  readOnly: true,
  async run(_args, call) {
    const {cache, root} = await openCache(call.context(), call.backends)
    const rows = await cache.list(root)
    return {
      data: {caches: rows},
      text: `${count(rows.length, 'cache')}${rows.some((row) => row.stale) ? ` (${rows.filter((row) => row.stale).length} stale)` : ''}`,
    }
  },
})

export const doctor = defineTool({
  name: 'doctor',
  title: 'Check what yard needs',
  description:
    "yard doctor (without --fix): checks that git, podman, a compose provider and yard's state directory work. structuredContent: the `doctor --json` report {checks: [{name, ok, level, detail, fix}], ok}; a failed check is data (ok false), not a tool error.",
  input: z.object({}).strict(),
  readOnly: true,
  async run(_args, call) {
    const report = await runDoctor(call.context(), {selfRoot: call.selfRoot})
    const failed = report.checks.filter((check) => !check.ok).length
    return {
      data: {...report},
      text:
        failed === 0
          ? 'yard is ready'
          : `${count(failed, 'required check')} failed: ${report.checks
              .filter((check) => !check.ok)
              .map((check) => check.name)
              .join(', ')}`,
    }
  },
})
