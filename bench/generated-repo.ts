/**
 * A generated repository for benches: `files` files in `dirs` directories and `commits` commits
 * (the first adds every file, each later one changes three), written by one `git fast-import`
 * stream into a bare repository that is cached between runs. Benches clone the cache into a
 * scratch directory, so nothing they do reaches it.
 */
import {spawn} from 'node:child_process'
import {existsSync} from 'node:fs'
import {mkdir, rename, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

export interface RepoShape {
  files: number
  dirs: number
  commits: number
}

/** Where generated repositories are kept: `BENCH_CACHE_DIR`, else `<tmp>/yard-bench-cache`. */
export function benchCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.BENCH_CACHE_DIR || join(tmpdir(), 'yard-bench-cache')
}

async function run(
  file: string,
  args: string[],
  cwd: string,
  input?: (stdin: NodeJS.WritableStream) => Promise<void>,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd,
      stdio: [input ? 'pipe' : 'ignore', 'ignore', 'pipe'],
      env: {...process.env, LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0'},
    })
    let stderr = ''
    child.stderr!.on('data', (chunk) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${file} ${args.join(' ')} failed (exit ${code}): ${stderr.trim()}`)),
    )
    if (input) input(child.stdin!).then(() => child.stdin!.end(), reject)
  })
}

/** Writes the fast-import stream, pausing when the pipe is full. */
async function writeHistory(stdin: NodeJS.WritableStream, shape: RepoShape, yardToml: string): Promise<void> {
  const perDir = Math.ceil(shape.files / shape.dirs)
  const filePath = (index: number) =>
    `src/d${String(Math.floor(index / perDir)).padStart(3, '0')}/f${String(index % perDir).padStart(3, '0')}.ts`
  const content = (index: number, version: number) =>
    `// file ${index}, version ${version}\nexport const value${index} = ${index * 7 + version}\n${'// padding '.repeat(16)}\n`
  const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`
  let chunk = ''
  const flush = async (force = false) => {
    if (chunk.length < 1 << 20 && !force) return
    const ok = stdin.write(chunk)
    chunk = ''
    if (!ok) await new Promise((resolve) => stdin.once('drain', resolve))
  }

  for (let commit = 0; commit < shape.commits; commit++) {
    chunk += `commit refs/heads/main\ncommitter yard bench <bench@yard.invalid> ${1_700_000_000 + commit * 60} +0000\n${data(`commit ${commit}`)}`
    if (commit === 0) {
      chunk += `M 100644 inline yard.toml\n${data(yardToml)}`
      for (let index = 0; index < shape.files; index++) {
        chunk += `M 100644 inline ${filePath(index)}\n${data(content(index, 0))}`
        await flush()
      }
    } else {
      for (let change = 0; change < 3; change++) {
        const index = (commit * 7919 + change * 104_729) % shape.files
        chunk += `M 100644 inline ${filePath(index)}\n${data(content(index, commit))}`
      }
    }

    await flush()
  }

  await flush(true)
}

/**
 * The cached bare repository of this shape (default branch `main`, holding `yardToml` and the
 * generated files), generated when missing.
 * @returns its path.
 */
export async function generatedRepo(shape: RepoShape, yardToml: string, log: (line: string) => void): Promise<string> {
  const cache = benchCacheDir()
  const bare = join(cache, `generated-${shape.files}f-${shape.dirs}d-${shape.commits}c-v1.git`)
  if (existsSync(join(bare, 'HEAD'))) return bare
  await mkdir(cache, {recursive: true})
  const building = `${bare}.building-${process.pid}`
  await rm(building, {recursive: true, force: true})
  log(`generating ${shape.files} files in ${shape.dirs} directories, ${shape.commits} commits into ${bare}`)
  const started = Date.now()
  await run('git', ['init', '-q', '--bare', '-b', 'main', building], cache)
  await run('git', ['fast-import', '--quiet'], building, async (stdin) => writeHistory(stdin, shape, yardToml))
  await rename(building, bare).catch(async (error: NodeJS.ErrnoException) => {
    // Another bench generated it meanwhile: keep theirs.
    await rm(building, {recursive: true, force: true})
    if (!existsSync(join(bare, 'HEAD'))) throw error
  })
  log(`generated in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  return bare
}

/** Clones `source` into `<dir>/<name>` (a local clone, hard-linking objects): the main checkout of a bench. */
export async function cloneInto(source: string, dir: string, name: string): Promise<string> {
  await run('git', ['clone', '-q', source, name], dir)
  return join(dir, name)
}
