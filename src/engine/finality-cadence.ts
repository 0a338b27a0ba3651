import type { Finality } from '../chain/finality.ts'

/**
 * Heads between two reads of the RPC's `finalized` tag while no payment waits for it. Ethereum's tag moves
 * once an epoch (32 blocks) and rollups' when their L1 batch is final, so a read per block mostly answers
 * what the last one did; what a later read delays is only the end of success watches and the window's
 * pruning, both of which may come late (docs/architecture.md, "The chain engine in detail").
 */
export const FINALITY_READ_EVERY = 8

export interface FinalityCadence {
  /** As `Finality.at`, but undefined (keep the previous value) when no read is due at this head. */
  at(head: bigint): Promise<bigint | undefined>
}

/**
 * Reads the finalized block at the first head, then every `every` heads, and at every head while
 * `awaited()` says a payment's verdict waits for finality (a `finalized` commitment whose transaction
 * was found): its verdict then comes on the first block the tag covers it, as before. A failed read is
 * tried again at the next head. A finality kept as a depth below the head costs no request: computed
 * at every head.
 */
export function createFinalityCadence(finality: Finality, options: { every?: number; awaited?: () => boolean } = {}): FinalityCadence {
  const every = BigInt(options.every ?? FINALITY_READ_EVERY)
  let readAt: bigint | undefined
  const due = (head: bigint) =>
    !finality.asksRpc() || readAt === undefined || head < readAt || head - readAt >= every || options.awaited?.() === true
  return {
    async at(head) {
      if (!due(head)) return undefined
      const known = await finality.at(head)
      if (known !== undefined) readAt = head
      return known
    },
  }
}
