/**
 * In-process reads of a repository's refs and config with isomorphic-git (DESIGN.md §2), for
 * long-lived processes and loops over many checkouts (the dashboard's refresh, the MCP server,
 * `yard worktree list` of many checkouts at their base: src/core/worktree/list.ts):
 * loading isomorphic-git once costs about as much as four or five `git` processes (~50 ms
 * against ~10 ms each, measured here), so a one-shot command asking git once or twice keeps the
 * CLI. It is imported lazily: commands that never open a reader never load it.
 *
 * Only what isomorphic-git reads as git does, in a repository's own git dir:
 * - refs: loose, packed (`packed-refs`, loose winning) and symbolic, a name expanded by git's
 *   rules in git's order (git-rev-parse(1), "SPECIFYING REVISIONS": `<name>`, `refs/<name>`,
 *   `refs/tags/`, `refs/heads/`, `refs/remotes/`, `refs/remotes/<name>/HEAD`);
 * - the repository's config file (`--local`), where git writes the `branch.*` keys read here;
 *   isomorphic-git reads no global or system config.
 * Never objects: isomorphic-git reads and checksums a whole pack to read one object from it
 * (hundreds of MB for a large cache after `repack -a -d`), and knows no alternates
 * (`objects/info/alternates`, a `clone --shared` workspace). Never a linked worktree's git dir
 * (a `commondir` file: its HEAD is its own, its refs are the common dir's). A config it parses
 * otherwise than git (`[include]`, `[includeIf]`, continued lines, `[section.sub]` headers),
 * per-worktree config (`extensions.worktreeConfig`), reftable refs (`extensions.refStorage`) or
 * legacy `remotes/` files: no reader (`openGitReader` gives undefined), the caller asks git.
 * Writes always go through git. test/sdk/git-read.test.ts compares every answer with git's.
 */
import nodeFs from 'node:fs'
import {readFile} from 'node:fs/promises'
import path from 'node:path'

type Managers = typeof import('isomorphic-git/managers')
type FileSystem = InstanceType<(typeof import('isomorphic-git/models'))['FileSystem']>

let loading: Promise<{managers: Managers; fs: FileSystem}> | undefined

/** isomorphic-git's ref and config managers, imported on first use (once per process). */
async function isomorphicGit(): Promise<{managers: Managers; fs: FileSystem}> {
  loading ??= Promise.all([import('isomorphic-git/managers'), import('isomorphic-git/models')]).then(
    ([managers, models]) => ({managers, fs: new models.FileSystem(nodeFs)}),
  )
  return loading
}

/** What one repository's git dir answers without a process. */
export interface GitReader {
  /**
   * The object id `name` names as git would resolve it (a full ref name, a name git's rules
   * expand, symbolic refs followed, or a 40-hex id given back as it is), undefined when no ref
   * of that name exists. The object itself is not read: a tag's ref gives the tag's id.
   */
  resolve(name: string): Promise<string | undefined>
  /**
   * `branch.<name>.<key>` (key case-insensitive) for every branch section having it; the last value
   * wins, as `git config --get`.
   */
  branchConfig(key: string): Promise<Map<string, string>>
  /**
   * Short branch name → its upstream's full ref (`%(upstream)` of git-for-each-ref(1)) for the
   * branches of `branches` (default: every branch section of the config) that have one:
   * `branch.<b>.merge` mapped by the first fetch refspec of `branch.<b>.remote` that matches
   * it, or itself for the remote `.`. Undefined when one of their remotes has a negative
   * refspec (`^refs/…`), whose effect on upstreams differs between git versions: ask git.
   */
  upstreams(branches?: readonly string[]): Promise<Map<string, string> | undefined>
}

/**
 * A section header as isomorphic-git reads it the way git does: lower-case name, optional quoted
 * subsection, optional comment.
 */
const HEADER = /^\[([a-z0-9-]+)(?:[ \t]+"(?:[^"\\]|\\.)*")?\][ \t]*(?:[#;].*)?$/
const VARIABLE = /^[A-Za-z][A-Za-z0-9-]*(?:\s*=.*)?$/

/**
 * Whether isomorphic-git parses `text` as git does (git-config(1), "SYNTAX", "INCLUDES"): no
 * `[include]`/`[includeIf]`, no `[section.sub]` or mixed-case section headers (git folds them;
 * isomorphic-git's subsection lookup does not), no header followed by a variable on its line,
 * no value continued on the next line.
 */
export function readableConfig(text: string): boolean {
  return text.split('\n').every((raw) => {
    const line = raw.trim()
    if (line === '' || line.startsWith('#') || line.startsWith(';')) return true
    if (line.startsWith('[')) {
      const header = HEADER.exec(line)
      return header !== null && header[1] !== 'include'
    }

    return VARIABLE.test(line) && !line.endsWith('\\')
  })
}

/**
 * A reader of the git dir `gitDir` (a main checkout's `.git` or a bare repository), or
 * undefined when it cannot be read in process as git reads it (see the file's docstring).
 * Reads the config once: a reader answers for the moment it was opened; open one per refresh.
 */
export async function openGitReader(gitDir: string): Promise<GitReader | undefined> {
  // Whatever fails here (an unreadable directory, a config isomorphic-git cannot parse) leaves the answer to git.
  return readerOf(gitDir).catch(() => undefined)
}

async function readerOf(gitDir: string): Promise<GitReader | undefined> {
  if (nodeFs.existsSync(path.join(gitDir, 'commondir')) || !nodeFs.existsSync(path.join(gitDir, 'HEAD')))
    return undefined
  // Remotes defined by legacy files (gitrepository-layout(5), `remotes/`) are no config.
  if (nodeFs.existsSync(path.join(gitDir, 'remotes')) && nodeFs.readdirSync(path.join(gitDir, 'remotes')).length > 0)
    return undefined
  const text = await readFile(path.join(gitDir, 'config'), 'utf8').catch(() => '')
  if (!readableConfig(text)) return undefined
  const {managers, fs} = await isomorphicGit()
  const config = await managers.GitConfigManager.get({fs, gitdir: gitDir})
  const extension = async (name: string) => String((await config.get(`extensions.${name}`)) ?? '').toLowerCase()
  if (
    ['1', 'on', 'true', 'yes'].includes(await extension('worktreeconfig')) ||
    !['', 'files'].includes(await extension('refstorage'))
  )
    return undefined
  const sections = ((await config.getSubsections('branch')) as unknown[]).filter(
    (name): name is string => typeof name === 'string',
  )
  const all = async (key: string) => ((await config.getall(key)) as unknown[]).map(String)
  let packed: Promise<RefFiles> | undefined
  return {
    async resolve(name) {
      if (name.split('/').some((part) => part === '..' || part === '') || FILES_NOT_REFS.has(name)) return undefined
      // packed-refs parsed once per reader: GitRefManager.resolve parses it on every call (~8 ms with 10 000 refs).
      packed ??= managers.GitRefManager.packedRefs({fs, gitdir: gitDir}).then((refs) => new RefFiles(gitDir, refs))
      try {
        return String(managers.GitRefManager.resolveAgainstMap({ref: name, map: await packed}).oid)
      } catch {
        return undefined
      }
    },
    async branchConfig(key) {
      const found = new Map<string, string>()
      for (const branch of new Set(sections)) {
        const value = (await all(`branch.${branch}.${key}`)).at(-1)
        if (value !== undefined) found.set(branch, value)
      }

      return found
    },
    async upstreams(branches = sections) {
      const found = new Map<string, string>()
      for (const branch of new Set(branches)) {
        const merge = (await all(`branch.${branch}.merge`))[0]
        const remote = (await all(`branch.${branch}.remote`)).at(-1)
        if (merge === undefined || remote === undefined) continue
        if (remote === '.') {
          found.set(branch, merge)
          continue
        }

        const refspecs = await all(`remote.${remote}.fetch`)
        if (refspecs.some((refspec) => refspec.startsWith('^'))) return undefined
        const upstream = trackingRef(refspecs, merge)
        if (upstream !== undefined) found.set(branch, upstream)
      }

      return found
    },
  }
}

/** Files of a git dir that are no refs, though git's rules would try their names (isomorphic-git's GIT_FILES). */
const FILES_NOT_REFS = new Set(['config', 'description', 'index', 'shallow', 'commondir'])

/**
 * A git dir's refs as isomorphic-git's `resolveAgainstMap` looks them up: the loose file when
 * there is one (git: a loose ref wins over its packed entry), else the packed entry.
 */
class RefFiles extends Map<string, string> {
  constructor(
    private readonly gitDir: string,
    packedRefs: Map<string, string>,
  ) {
    super(packedRefs)
  }

  override get(ref: string): string | undefined {
    if (FILES_NOT_REFS.has(ref)) return undefined
    try {
      const loose = nodeFs.readFileSync(path.join(this.gitDir, ref), 'utf8')
      if (loose !== '') return loose
    } catch {}

    return super.get(ref)
  }
}

/**
 * The remote-tracking ref `merge` is fetched to by the first of `refspecs` whose source matches
 * it (remote.c `query_refspecs`: a pattern's one `*` matches any part of the name, prefix and
 * suffix not overlapping), or undefined when none does or the match has no destination.
 */
export function trackingRef(refspecs: readonly string[], merge: string): string | undefined {
  for (const refspec of refspecs) {
    const spec = refspec.startsWith('+') ? refspec.slice(1) : refspec
    const colon = spec.indexOf(':')
    const [source, destination] = colon === -1 ? [spec, ''] : [spec.slice(0, colon), spec.slice(colon + 1)]
    const star = source.indexOf('*')
    if (star === -1) {
      if (source === merge) return destination === '' ? undefined : destination
      continue
    }

    const prefix = source.slice(0, star)
    const suffix = source.slice(star + 1)
    if (merge.length < prefix.length + suffix.length || !merge.startsWith(prefix) || !merge.endsWith(suffix)) continue
    return destination === ''
      ? undefined
      : destination.replace('*', merge.slice(prefix.length, merge.length - suffix.length))
  }

  return undefined
}
