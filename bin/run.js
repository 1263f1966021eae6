#!/usr/bin/env node
// Node's module compile cache (DESIGN.md §9) under yard's cache directory (XDG_CACHE_HOME/yard on
// Linux), never in the package: a warm start reads V8's code cache instead of compiling oclif
// and the bundle again. It is best effort: a cache directory that cannot be made or written
// (read-only, full) only means no cache. NODE_COMPILE_CACHE chooses another directory and
// NODE_DISABLE_COMPILE_CACHE=1 turns it off, as for any Node program. Imports come after it,
// so that they are cached; the only ones before it are Node's own.
import module from 'node:module'
import os from 'node:os'
import path from 'node:path'

/**
 * yard's cache directory as env-paths gives it (`envPaths('yard', {suffix: ''}).cache`, which the
 * state directory's code uses), worked out here: a package imported before the cache is on would
 * be compiled anew on every start.
 */
function cacheDirectory() {
  const home = os.homedir()
  if (process.platform === 'darwin') return path.join(home, 'Library', 'Caches', 'yard')
  if (process.platform === 'win32')
    return path.join(process.env.LOCALAPPDATA || path.join(home, 'AppData', 'Local'), 'yard', 'Cache')
  return path.join(process.env.XDG_CACHE_HOME || path.join(home, '.cache'), 'yard')
}

try {
  module.enableCompileCache?.(path.join(cacheDirectory(), 'node-compile-cache'))
} catch {
  // No cache this time; the command runs as without one.
}

// A reader that closes its end of stdout early (`yard worktree list | head -1`) leaves the rest of
// the output nowhere to go; that is not a failure of the command, which still finishes its work
// (a remove cut off half-way would be worse). oclif's final flush then waits for a 'drain' that
// never comes, and Node would exit 13 with an "unsettled top-level await" warning; once the loop
// is empty yard exits with the command's own code instead.
// The same holds for stderr (`yard worktree add x 2>&1 | head -1`): an add whose progress line finds
// the pipe closed still finishes, or rolls back, rather than dying half-way.
let stdoutClosed = false
// A pipe's writes are asynchronous in Node, and a command that ends with process.exit (oclif does
// for every non-zero exit) drops what the pipe has not taken yet: `yard up --dry-run | less` of a
// large project lost all past the first 64 KiB when it exited 3. Blocking writes, as a file or a
// terminal gets, lose nothing (nodejs/node#6456); a reader that stops reading holds yard as it
// would any program.
for (const stream of [process.stdout, process.stderr]) stream._handle?.setBlocking?.(true)
// Any other write error (ENOSPC of `yard … > /dev/full`, EIO) means output was lost: said once
// on stderr when it can be, and the exit is 1 unless the command fails with a code of its own.
const onWriteError = (stream) => (error) => {
  stdoutClosed = true
  if (error.code === 'EPIPE') return
  process.exitCode ||= 1
  if (stream === process.stdout && !process.stderr.destroyed)
    process.stderr.write(`yard: its output could not be written (${error.code ?? error.message}); it is lost\n`)
}

const writeErrorListeners = new Map([process.stdout, process.stderr].map((stream) => [stream, onWriteError(stream)]))
for (const [stream, listener] of writeErrorListeners) stream.on('error', listener)
process.once('beforeExit', () => {
  if (stdoutClosed) process.exit()
})

// `yard exec NAME -- CMD` (an agent's every instruction), `yard sandbox create NAME --repo …` (its
// every sandbox) and `yard worktree add` (its every worktree) run without oclif when oclif would
// add nothing to them (no other flags, no plugins: src/cli/fast-exec.ts, fast-create.ts,
// fast-worktree-add.ts); anything else is oclif's. A build without that
// module (or one that fails to load) is oclif's too.
const [first, second] = process.argv.slice(2)
const fastPath =
  first === 'exec'
    ? {file: 'fast-exec.js', run: 'fastExec'}
    : first === 'sandbox' && second === 'create'
      ? {file: 'fast-create.js', run: 'fastCreate'}
      : first === 'worktree' && second === 'add'
        ? {file: 'fast-worktree-add.js', run: 'fastWorktreeAdd'}
        : undefined
const fast = fastPath
  ? await import(new URL(`../dist/cli/${fastPath.file}`, import.meta.url).href).then(
      (loaded) => loaded[fastPath.run],
      () => undefined,
    )
  : undefined
const code = await fast?.(process.argv.slice(2))
if (code === undefined) {
  const {execute} = await import('@oclif/core')
  // oclif's own stdout 'error' listener rethrows all but EPIPE, as an uncaught exception with a stack.
  for (const [stream, ours] of writeErrorListeners)
    for (const listener of stream.listeners('error')) if (listener !== ours) stream.removeListener('error', listener)
  await execute({dir: import.meta.url})
} else if (code !== 0) {
  // As oclif leaves after a command's this.exit(code).
  process.exit(code)
}
