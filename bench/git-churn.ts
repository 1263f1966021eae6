/**
 * Concurrent git churn for bench/cache.bench.ts: `node --import tsx bench/git-churn.ts OUT ROUNDS
 * DIR…` runs, in every DIR at once, ROUNDS rounds of commit + tag + fetch + tag delete +
 * `pack-refs --all`, and writes to OUT how many git commands ran and how many failed on a lock
 * (`Unable to create '….lock'`, `cannot lock ref`), with a few examples. Exits 0 however many
 * failed: failures are the measurement. Each DIR is on its own branch already.
 */
import {execFile} from 'node:child_process'
import {writeFile} from 'node:fs/promises'
import {basename, join} from 'node:path'

interface Tally {
  commands: number
  lockFailures: number
  otherFailures: number
  examples: string[]
}

const [out, roundsText, ...dirs] = process.argv.slice(2)
const rounds = Number(roundsText)
if (!out || !Number.isInteger(rounds) || rounds < 1 || dirs.length === 0) {
  process.stderr.write('usage: git-churn.ts OUT ROUNDS DIR…\n')
  process.exit(2)
}

const env = {
  ...process.env,
  LC_ALL: 'C',
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'yard bench',
  GIT_AUTHOR_EMAIL: 'bench@yard.invalid',
  GIT_COMMITTER_NAME: 'yard bench',
  GIT_COMMITTER_EMAIL: 'bench@yard.invalid',
}
const LOCK = /\.lock'?: File exists|Unable to create .*\.lock|cannot lock ref|could not lock|unable to lock/i
const tally: Tally = {commands: 0, lockFailures: 0, otherFailures: 0, examples: []}

async function git(cwd: string, args: string[]): Promise<void> {
  tally.commands++
  return new Promise((resolve) => {
    execFile('git', args, {cwd, env}, (error, _stdout, stderr) => {
      if (error) {
        const words = `${basename(cwd)}: git ${args.join(' ')}: ${stderr.trim().split('\n', 1)[0]}`
        if (LOCK.test(stderr)) tally.lockFailures++
        else tally.otherFailures++
        if (tally.examples.length < 5) tally.examples.push(words)
      }

      resolve()
    })
  })
}

async function churn(dir: string, index: number): Promise<void> {
  const file = `churn-${index}.txt`
  for (let round = 0; round < rounds; round++) {
    await writeFile(join(dir, file), `${index} ${round}\n`)
    await git(dir, ['add', file])
    await git(dir, ['commit', '-q', '--no-verify', '-m', `churn ${index} ${round}`])
    await git(dir, ['tag', `churn-${index}-${round}`])
    await git(dir, ['fetch', '-q', 'origin'])
    await git(dir, ['tag', '-d', `churn-${index}-${round}`])
    await git(dir, ['pack-refs', '--all'])
  }
}

await Promise.all(dirs.map(async (dir, index) => churn(dir, index)))
await writeFile(out, JSON.stringify(tally))
