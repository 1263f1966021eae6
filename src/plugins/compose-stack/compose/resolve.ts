/**
 * The compose resolver (DESIGN.md §4.2, "yard renders the stack"): resolves a checkout's
 * compose project the way Compose does — files (`files.ts`), `.env` and interpolation with
 * yard's variables winning (`env.ts`, `interpolate.ts`), YAML with anchors and merge keys
 * (`yaml.ts`), `include` (`include.ts`), `extends` (`extends.ts`), the merge rules
 * (`merge.ts`, `unique.ts`), profiles (`profiles.ts`), absolute paths (`paths.ts`), per-service
 * env files and extension fields (`normalize.ts`) — into one model that a provider can run as
 * is. The compose specification is the rule book; compose-go's loader settles its details.
 */
import {homedir} from 'node:os'
import path from 'node:path'

import {InputError} from '../../../sdk/errors.js'
import {checkReferences} from './consistency.js'
import {addEnvFileValues, layered, readOptionalEnvFile} from './env.js'
import {selectComposeFiles} from './files.js'
import {loadProjectFiles, ResolveSession} from './loader.js'
import {normalizeServices, removeExtensions} from './normalize.js'
import {applyProfiles, enabledProfiles} from './profiles.js'
import {withConfinement} from './read.js'
import {type ComposeModelDocument, isMapping, type Mapping, type ResolvedProject, type ResolveInput} from './types.js'

export type {ResolvedProject, ResolveInput} from './types.js'

/**
 * Resolves the compose project of a checkout; undefined when it has no compose file (the
 * checkout is box-only). Reads files only (no subprocess); every file is read once.
 * @throws InputError (exit 2) naming the file and the key or line: a missing configured or
 *   `COMPOSE_FILE` file, a default file name that is no readable file, invalid YAML (a key given
 *   twice included), aliases expanding past the caps or nesting too deep (`yaml.ts`), a failed
 *   interpolation (`${VAR:?…}`, malformed `${`), an invalid service name, attribute type or
 *   `ports` entry (`validate.ts`), a merge of a mapping with a non-mapping, a broken `include` or
 *   `extends` (missing file or service, cycle, too deep), a missing required `env_file`, an
 *   active service needing an inactive one; RefusedError (exit 3) for a file outside `input.confine`.
 */
export async function resolveComposeProject(input: ResolveInput): Promise<ResolvedProject | undefined> {
  return resolveComposeProjectSync(input)
}

/** `resolveComposeProject`, synchronously; confined to `input.confine` when set. */
export function resolveComposeProjectSync(input: ResolveInput): ResolvedProject | undefined {
  return withConfinement(input.confine, () => resolveUnconfined(input))
}

function resolveUnconfined(input: ResolveInput): ResolvedProject | undefined {
  const session = new ResolveSession(input.yardEnv, input.env.HOME || homedir())
  const warn = session.warn.bind(session)
  const shellAndYard = layered(input.env, input.yardEnv)
  const checkoutDotenvFile = path.join(input.checkoutPath, '.env')
  const checkoutDotenv = readOptionalEnvFile(checkoutDotenvFile, shellAndYard)
  const {files} = selectComposeFiles({...input, checkoutDotenv, checkoutDotenvFile, warn})
  if (files.length === 0) return undefined

  // docker compose reads the working directory's .env, then (where the shell and it leave a
  // variable unset) the project directory's — the first file's directory (cmd/compose toProjectOptions).
  const projectDirectory = path.dirname(files[0])
  const interpolationEnv = layered(input.env, input.yardEnv)
  addEnvFileValues(interpolationEnv, checkoutDotenv, checkoutDotenvFile, input.yardEnv, warn)
  const dotenvFile = path.join(projectDirectory, '.env')
  if (dotenvFile !== checkoutDotenvFile) {
    addEnvFileValues(
      interpolationEnv,
      readOptionalEnvFile(dotenvFile, interpolationEnv),
      dotenvFile,
      input.yardEnv,
      warn,
    )
  }

  const loaded = loadProjectFiles(files, {session, workingDir: projectDirectory, env: interpolationEnv, included: []})
  removeExtensions(loaded)
  const services = (isMapping(loaded.services) ? loaded.services : {}) as Record<string, Mapping>
  for (const [name, service] of Object.entries(services)) {
    if (!isMapping(service)) {
      throw new InputError(`service ${name} of ${files.join(', ')} is not a mapping`, {
        why: 'the compose specification defines a service as a mapping of its attributes (image, build, ports, …)',
        fix: `give ${name} its attributes, e.g. \`${name}:\` followed by an indented \`image: …\`, or remove it`,
      })
    }
  }

  const builtImages = Object.values(services).flatMap((service) =>
    typeof service.image === 'string' && service.build !== undefined ? [service.image] : [],
  )
  const inactive = applyProfiles(services, enabledProfiles(interpolationEnv.COMPOSE_PROFILES, input.profiles))
  checkReferences(loaded, services, inactive)
  normalizeServices(services, interpolationEnv)
  const model = {...loaded, services} as ComposeModelDocument
  return {
    projectDirectory,
    files: [...session.files],
    model,
    builtImages: [...new Set(builtImages)],
    interpolationEnv,
    warnings: [...session.warnings],
  }
}
