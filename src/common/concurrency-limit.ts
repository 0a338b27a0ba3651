/**
 * Runs at most `max` of the works given to it at once; the others wait their turn, first come first
 * served. A work that fails frees its turn like one that succeeds.
 */
export function createConcurrencyLimit(max: number): <T>(work: () => Promise<T>) => Promise<T> {
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`a concurrency limit is a whole number from 1, not ${max}`)
  let running = 0
  const waiting: (() => void)[] = []
  const done = () => {
    const next = waiting.shift()
    if (next) next()
    else running--
  }
  return async (work) => {
    // A turn freed is handed over as is (`running` stays): a work arriving meanwhile cannot take it first.
    if (running < max) running++
    else await new Promise<void>((resolve) => waiting.push(resolve))
    try {
      return await work()
    } finally {
      done()
    }
  }
}
