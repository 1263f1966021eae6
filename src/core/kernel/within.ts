/** A bound on how long a caller waits for work that goes on regardless. */

/**
 * Resolves `work`'s value, or `late` when `work` has not settled within `budgetMs` (ms); the work
 * goes on unwatched. A rejection of `work` within the budget rejects. The timer is cleared as soon
 * as either settles, so it never holds the process.
 */
export async function within<T, L = T>(work: Promise<T>, budgetMs: number, late: L): Promise<L | T> {
  let timer: NodeJS.Timeout | undefined
  const slow = new Promise<L>((resolve) => {
    timer = setTimeout(() => resolve(late), budgetMs)
  })
  try {
    return await Promise.race([work, slow])
  } finally {
    clearTimeout(timer)
  }
}
