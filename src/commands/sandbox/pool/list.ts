import {listPools, type PoolRow} from '../../../core/sandbox/index.js'
import {BaseCommand} from '../../base.js'

/** `yard sandbox pool list [--json]` (docs/sandboxes.md, "Warm pool"). */
export default class SandboxPoolList extends BaseCommand {
  static aliases = ['sandbox:pool:ls']
  static summary = "List the project's warm pools"
  static description =
    'Each pool with its id, runtime, repositories, size and how many pods are ready (Running, prepared, unclaimed), then its unclaimed pods. Claimed pods are sandboxes: yard sandbox list shows them, marked warm.'

  static examples = ['<%= config.bin %> sandbox pool list --json']

  async run(): Promise<PoolRow[]> {
    await this.parse(SandboxPoolList)
    const rows = await listPools(this.context, this.backends)
    if (rows.length === 0) this.print('no pools')
    for (const row of rows) {
      this.print(
        `${row.id} ${row.runtime} ${row.ready}/${row.size} ready  ${row.repos.map((repo) => `${repo.slot}=${repo.url}`).join(' ')}`,
      )
      for (const pod of row.pods) this.print(`  ${pod.name} ${pod.phase}${podNote(row.id, pod)}`)
    }

    return rows
  }
}

/** What a pod's line adds to its phase: why it is not ready. */
function podNote(id: string, pod: PoolRow['pods'][number]): string {
  if (pod.phase === 'orphaned') return ` (its create died before the claim; yard sandbox pool fill ${id} removes it)`
  return pod.ready || pod.phase === 'Gone' ? '' : ' (preparing)'
}
