/**
 * How the quorum asks providers for their votes: several at once, each with a timeout of its own
 * shorter than the RPC timeout, so that a provider that hangs costs a verdict a moment, not the
 * whole RPC timeout, and never holds the chain's follower.
 */
export interface VoteRound<T> {
  /** Providers to ask, best first. */
  candidates: number[]
  /** Asked at once at the start: the answers a decision needs at the least. */
  parallel: number
  /** Provider `i`'s answer; undefined (or a failure) is no answer. */
  ask(i: number): Promise<T | undefined>
  /** Every answer so far (in arrival order) is enough: stop asking. */
  enough(answers: ReadonlyMap<number, T>): boolean
  /** No answer from one provider after this long is no answer (the next provider is asked). */
  timeoutMs: number
  /** After this long without an answer from provider `i`, the next provider is asked too (its recent p90). */
  hedgeDelayMs(i: number): number
  /** Provider `i` was slow and the next one was asked too. */
  onHedge?(i: number): void
}

/**
 * Asks `parallel` providers at once, one more for each one that gives no answer or is slower than
 * its hedge delay, and one more when the answers in are not `enough` and none is on its way; returns
 * the answers once they are enough or every provider was asked. Requests still running then are left to finish on their own
 * (their answers are not counted).
 */
export function gatherVotes<T>(round: VoteRound<T>): Promise<Map<number, T>> {
  const answers = new Map<number, T>()
  let next = 0
  let running = 0
  let finished = false
  return new Promise((resolve) => {
    const finish = () => {
      finished = true
      resolve(answers)
    }
    /** Asks the next provider; false when none is left. */
    const launch = (): boolean => {
      if (next >= round.candidates.length) return false
      const i = round.candidates[next++]!
      running++
      // `replaced`: one more provider was asked already, because this one was slow.
      let settled = false
      let replaced = false
      const settle = (answer: T | undefined) => {
        if (settled) return
        settled = true
        clearTimeout(hedge)
        clearTimeout(timeout)
        running--
        if (finished) return
        if (answer !== undefined) {
          answers.set(i, answer)
          if (round.enough(answers)) return finish()
        }
        // No answer: one more provider in its place (unless one was asked already because it was slow).
        // An answer that is not enough yet: one more once no other answer is on its way.
        if (answer === undefined ? !replaced : running === 0) launch()
        if (running === 0) finish()
      }
      const hedge = setTimeout(
        () => {
          if (settled || finished) return
          if (launch()) {
            replaced = true
            round.onHedge?.(i)
          }
        },
        Math.min(round.hedgeDelayMs(i), round.timeoutMs),
      )
      const timeout = setTimeout(() => settle(undefined), round.timeoutMs)
      round.ask(i).then(settle, () => settle(undefined))
      return true
    }
    const first = Math.min(round.parallel, round.candidates.length)
    for (let k = 0; k < first; k++) launch()
    if (running === 0) finish()
  })
}
