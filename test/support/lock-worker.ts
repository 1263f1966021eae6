// A separate process that takes the lock, checks it is alone inside, and leaves; used by the
// lock tests to prove mutual exclusion across processes.
import {existsSync, rmSync, writeFileSync} from 'node:fs'

import {withLock} from '../../src/sdk/lock.js'

const [lockPath, marker, rounds] = process.argv.slice(2)
let violations = 0
for (let round = 0; round < Number(rounds); round++) {
  await withLock(lockPath, {budgetMs: 60_000, waitMs: 60_000}, async () => {
    if (existsSync(marker)) violations++
    writeFileSync(marker, String(process.pid))
    await new Promise((resolve) => setTimeout(resolve, 2))
    rmSync(marker, {force: true})
  })
}

process.stdout.write(String(violations))
