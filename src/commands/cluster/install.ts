import {Flags} from '@oclif/core'

import {clusterInstall, type ClusterInstallResult} from '../../core/cluster/index.js'
import {BaseCommand} from '../base.js'

/** `yard cluster install [--dry-run] [--image IMAGE]` (DESIGN.md §5.2; docs/cluster.md). */
export default class ClusterInstall extends BaseCommand {
  static summary = 'Install what the kubernetes runtime needs: namespace, Repo CRD, cache agent'
  static description = `Creates, or updates where it differs, in [cluster] namespace of [cluster] context: the Namespace, the CustomResourceDefinition repos.yard.dev, and the cache agent's ServiceAccount, Role and RoleBinding (exactly what the agent uses: list pods, list repos, patch repos/status; no Secrets) and DaemonSet (yard cache agent --kubernetes on every node, the caches under [cluster] cache-root on a hostPath, the credentials Secret of yard cluster credentials mounted read-only, read-only root filesystem). Running it again changes nothing.

--dry-run prints the objects as YAML and needs no kubeconfig or cluster (kubectl apply -f - takes it). The agent image defaults to localhost/yard-agent:<yard's version>, built from deploy/Containerfile (docs/cluster.md).`
  static examples = [
    '<%= config.bin %> cluster install --dry-run',
    '<%= config.bin %> cluster install --dry-run | kubectl apply -f -',
    '<%= config.bin %> cluster install --image registry.example.com/team/yard-agent:0.1.0',
    'YARD_KUBE_CONTEXT=kind-yard <%= config.bin %> cluster install --json',
  ]

  static flags = {
    'dry-run': Flags.boolean({description: 'print the objects as YAML, touch no cluster'}),
    image: Flags.string({description: "the cache agent's image (default localhost/yard-agent:<version>)"}),
  }

  async run(): Promise<ClusterInstallResult> {
    const {flags} = await this.parse(ClusterInstall)
    const result = await clusterInstall(this.context, this.backends, {
      image: flags.image,
      version: this.config.version,
      dryRun: flags['dry-run'],
      onStep: (step) =>
        this.print(`${step.action.padEnd(9)} ${step.kind} ${step.namespace ? `${step.namespace}/` : ''}${step.name}`),
    })
    if (flags['dry-run']) {
      this.print(result.yaml.trimEnd())
      return result
    }

    const count = (action: string) => result.steps.filter((step) => step.action === action).length
    this.print(
      `installed in namespace ${result.namespace}: ${count('created')} created, ${count('updated')} updated, ${count('unchanged')} unchanged (agent image ${result.image})`,
    )
    return result
  }
}
