/**
 * The moments right after a block was processed: the farthest from the next block. Periodic work that holds
 * the main thread (the embedded database's analyses, the memory release's collection; docs/operations.md) waits
 * for one, so that it does not land on a block's way to its callbacks.
 */
export interface QuietMoments {
  /** A block was processed: the waiting work may run now. */
  blockProcessed(): void
  /** Resolves at the next block processed, or after `maxWaitMs` (the chain may be stalled). */
  next(maxWaitMs: number): Promise<void>
}

export function createQuietMoments(): QuietMoments {
  const waiting = new Set<() => void>()
  return {
    blockProcessed() {
      for (const resolve of [...waiting]) resolve()
    },
    next(maxWaitMs) {
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer)
          waiting.delete(done)
          resolve()
        }
        const timer = setTimeout(done, maxWaitMs)
        timer.unref()
        waiting.add(done)
      })
    },
  }
}
