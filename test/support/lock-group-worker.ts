// Takes a lock, starts `sleep 60` in its own process group, records that group in the lock,
// prints the sleep's pid and waits to be killed: the lock tests' orphaned child.
import {spawn} from 'node:child_process'

import {acquireLock} from '../../src/sdk/lock.js'

const [lockPath] = process.argv.slice(2)
const lock = await acquireLock(lockPath, {budgetMs: 600_000, purpose: 'orphan test'})
const child = spawn('sleep', ['60'], {detached: true, stdio: 'ignore'})
lock.recordGroup(child.pid)
process.stdout.write(`${child.pid}\n`)
await new Promise((resolve) => setTimeout(resolve, 120_000))
