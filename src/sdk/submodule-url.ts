/**
 * How git resolves a submodule's url (gitsubmodules(7), git-submodule(1) "init"): shared by the
 * cache (which caches submodules by the url they resolve to) and attach in a sandbox pod (which
 * must give git those same urls, not ones resolved against the cache path it cloned from).
 */

/**
 * Resolves a submodule url against the superproject's remote url as `git submodule init` does
 * (git's `relative_url()`): each leading `../` drops the remote's last path component (or the
 * path after `host:` of an scp-like url), `./` is dropped; an absolute url is returned as is.
 */
export function resolveSubmoduleUrl(superUrl: string, url: string): string {
  if (!url.startsWith('./') && !url.startsWith('../')) return url
  let base = superUrl.replace(/\/+$/, '')
  let rest = url
  let separator = '/'
  for (;;) {
    if (rest.startsWith('./')) rest = rest.slice(2)
    else if (rest.startsWith('../')) {
      rest = rest.slice(3)
      const scheme = base.indexOf('://')
      // With a scheme, the path starts at the first `/` after the host (`https://host/app.git`).
      const floor = scheme === -1 ? 0 : base.indexOf('/', scheme + 3)
      const slash = base.lastIndexOf('/')
      const colon = scheme === -1 ? base.lastIndexOf(':') : -1
      if (floor !== -1 && slash >= floor && slash > colon) {
        base = base.slice(0, slash)
        separator = '/'
      } else if (colon > 0) {
        // `host:app.git` → `host:` + rest (scp-like: the path is what follows the colon).
        base = base.slice(0, colon)
        separator = ':'
      } else {
        base = scheme === -1 ? '.' : base
        separator = '/'
      }
    } else break
  }

  return `${base}${separator}${rest.replace(/^\/+/, '')}`
}
