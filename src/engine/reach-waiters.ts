// Callers waiting for the follower to process a block (block-follower.ts `reached`): the fast path's
// check of a new trace waits for the blocks whose pending trackings were read before the trace was stored.
/** Callers of `reached`, answered as blocks are processed, the rest when the syncs end. */
export function createReachWaiters() {
  let waiting: { number: bigint; answer: (reached: boolean) => void }[] = []
  return {
    add: (number: bigint) => new Promise<boolean>((answer) => waiting.push({ number, answer })),
    /** A block at `head` was processed. */
    reach(head: bigint) {
      if (waiting.length === 0) return
      const still = waiting.filter((w) => w.number > head)
      for (const w of waiting) if (w.number <= head) w.answer(true)
      waiting = still
    },
    /** No sync is under way or queued: every caller is answered from the processed head. */
    settle(head: bigint | undefined) {
      const answered = waiting
      waiting = []
      for (const w of answered) w.answer(head !== undefined && head >= w.number)
    },
  }
}
