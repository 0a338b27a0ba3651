/** Bounds of the wait before a read is also sent to the next provider (see `failover`). */
export const HEDGE_MIN_MS = 200
export const HEDGE_MAX_MS = 2_000
/** Answers a provider's window keeps (its recent latency, not its whole history). */
const WINDOW = 64
/** Fewer answers than this say too little about a provider: the longest wait applies. */
const FEWEST = 8

/**
 * The recent answer times of one provider and how long a read waits for it before it is hedged:
 * its 90th percentile, so that a provider answering as usual is hedged only one time in ten at
 * most, bounded so that a fast provider is not doubled on every small hiccup (200 ms) and a slow
 * one does not hold a read for long (2 s).
 */
export class LatencyWindow {
  readonly #samples: number[] = []
  #next = 0

  add(ms: number): void {
    if (this.#samples.length < WINDOW) this.#samples.push(ms)
    else this.#samples[this.#next] = ms
    this.#next = (this.#next + 1) % WINDOW
  }

  hedgeDelayMs(): number {
    if (this.#samples.length < FEWEST) return HEDGE_MAX_MS
    const sorted = [...this.#samples].sort((a, b) => a - b)
    const p90 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.9))]!
    return Math.min(HEDGE_MAX_MS, Math.max(HEDGE_MIN_MS, p90))
  }
}
