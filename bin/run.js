#!/usr/bin/env node
// Node's module compile cache (DESIGN.md §9) under yard's cache directory (XDG_CACHE_HOME/yard on
// Linux), never in the package: a warm start reads V8's code cache instead of compiling oclif
// and the bundle again. It is best effort: a cache directory that cannot be made or written
// (read-only, full) only means no cache. NODE_COMPILE_CACHE chooses another directory and
// NODE_DISABLE_COMPILE_CACHE=1 turns it off, as for any Node program. Imports come after it,
// so that they are cached.
import module from 'node:module'
import path from 'node:path'

import envPaths from 'env-paths'

try {
  module.enableCompileCache?.(path.join(envPaths('yard', {suffix: ''}).cache, 'node-compile-cache'))
} catch {
  // No cache this time; the command runs as without one.
}

const {execute} = await import('@oclif/core')
await execute({dir: import.meta.url})
