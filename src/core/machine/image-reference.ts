/**
 * Container image references, checked against the grammar of the distribution project's
 * `reference` package (github.com/distribution/reference, regexp.go), which podman and docker
 * parse with:
 *
 *   reference  := name [ ":" tag ] [ "@" digest ]
 *   name       := [domain "/"] path-component ["/" path-component]*
 *   domain     := host [":" port]      host := domain-name | "[" IPv6 "]"
 *   path-component := [a-z0-9]+ ( ( "." | "_" | "__" | "-"+ ) [a-z0-9]+ )*
 *   tag        := [\w][\w.-]{0,127}
 *   digest     := algorithm ":" hex{32,}
 *
 * A name is at most 255 characters. Anything else (`--privileged`, `--volume=/:/host`) is
 * refused before it reaches `podman run`, where it would be read as a flag.
 */
import {InputError} from '../../sdk/errors.js'

const ALPHANUMERIC = '[a-z0-9]+'
const SEPARATOR = '(?:[._]|__|[-]+)'
const PATH_COMPONENT = `${ALPHANUMERIC}(?:${SEPARATOR}${ALPHANUMERIC})*`
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])'
const HOST = String.raw`(?:${DOMAIN_COMPONENT}(?:\.${DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])`
const DOMAIN = `${HOST}(?::[0-9]+)?`
const NAME = `(?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*`
const TAG = String.raw`[\w][\w.-]{0,127}`
const DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}'
const REFERENCE = new RegExp(`^(${NAME})(?::${TAG})?(?:@${DIGEST})?$`)
/** distribution/reference's NameTotalLengthMax. */
const NAME_MAX = 255

/**
 * Why `image` is not an image reference, or undefined when it is one (see the module comment).
 * A first component with a `.` or `:`, or `localhost`, is a registry domain (as in the grammar, a
 * domain's host may hold upper-case letters; a path may not).
 */
export function imageReferenceProblem(image: string): string | undefined {
  if (image.startsWith('-')) return 'it starts with "-", so podman would read it as an option'
  const match = REFERENCE.exec(image)
  if (!match) return 'it is not an image reference ([registry[:port]/]name[:tag][@digest], name in lower case)'
  if (match[1].length > NAME_MAX) return `the repository name is longer than ${NAME_MAX} characters`
  // Only a domain may hold upper case, and a first component is one only with a "." or ":", or as localhost.
  const [first, ...rest] = match[1].split('/')
  const domain = rest.length > 0 && (/[.:]/.test(first) || first === 'localhost')
  if (!domain && /[A-Z]/.test(first)) return 'the repository name holds upper case (only a registry domain may)'
  return undefined
}

/**
 * Checks an image reference given on the command line or in config.
 * @param source where it came from, for the message: `--image`, `yard.toml [box] image`.
 * @throws InputError (exit 2) naming the source, before anything runs.
 */
export function validateImageReference(image: string, source: string): string {
  const problem = imageReferenceProblem(image)
  if (problem === undefined) return image
  throw new InputError(`invalid image "${image}" from ${source}: ${problem}`, {
    why: 'an image is named as podman names it: [registry[:port]/]name[:tag][@digest], e.g. docker.io/library/node:22 or localhost/app@sha256:…',
    fix: `give an image reference, e.g. ${source.startsWith('-') ? `${source}=docker.io/library/debian:12` : 'image = "docker.io/library/debian:12"'}`,
  })
}
