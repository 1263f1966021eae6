import {Flags} from '@oclif/core'

import {buildDefaultImage, type ImageBuild} from '../../core/machine/index.js'
import {BaseCommand, quietFlag} from '../base.js'

/** `yard image build` (DESIGN.md §8). */
export default class ImageBuildCommand extends BaseCommand {
  static summary = "Build yard's default image (box and sandboxes) when missing"
  static description =
    'A debootstrap --variant=minbase root filesystem with git, imported with podman import and tagged by the hash of its recipe: built once per machine (about a minute; 234 MB, as `podman image ls` counts it), reused afterwards.'

  static examples = ['<%= config.bin %> image build', '<%= config.bin %> image build --force']
  static flags = {force: Flags.boolean({description: 'build again even when the tag exists'}), quiet: quietFlag}

  async run(): Promise<ImageBuild> {
    const {flags} = await this.parse(ImageBuildCommand)
    const build = await buildDefaultImage(this.context, {force: flags.force})
    this.print(
      build.built
        ? `built ${build.image} in ${build.seconds} s`
        : `${build.image} exists: nothing to do (--force builds it again)`,
    )
    return build
  }
}
