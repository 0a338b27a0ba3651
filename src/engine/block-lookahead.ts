import type { ChainReader, FullBlock } from '../chain/chain-reader.ts'

/** Blocks read at once ahead of the one being processed (catching up): a slow or failed read delays the others less. */
const lookaheadBlocks = 4

/**
 * The next few blocks, requested side by side while the follower processes them one by one in
 * order: under a flaky provider, one read hanging until its timeout or waiting out a retry no
 * longer stalls every block behind it.
 */
export function createLookahead(reader: ChainReader, head: bigint) {
  const reads = new Map<bigint, Promise<FullBlock | null>>()
  return {
    /** Whether the last block taken was read ahead (not just now). */
    read: false,
    from(first: bigint, most: number) {
      const last = first + BigInt(Math.min(lookaheadBlocks, most)) - 1n
      for (let number = first; number <= last && number <= head; number++) {
        if (reads.has(number)) continue
        const read = reader.block(number)
        read.catch(() => {}) // awaited by take(); a read never taken must not be an unhandled rejection
        reads.set(number, read)
      }
    },
    take(number: bigint): Promise<FullBlock | null> {
      const read = reads.get(number)
      reads.delete(number)
      this.read = read !== undefined
      return read ?? reader.block(number)
    },
    clear() {
      reads.clear()
    },
  }
}
