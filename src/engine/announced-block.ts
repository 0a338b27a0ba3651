import type { ChainReader, FullBlock } from '../chain/chain-reader.ts'
import { fullBlockFrom } from '../chain/pooled-block.ts'
import type { BlockHeader } from '../domain/block-window.ts'
import type { PendingPool } from './pending-pool.ts'

/**
 * Reads the block a `newHeads` notification announced. Its transactions were mostly announced pending
 * before: then the block is read with its hashes only (for the provider a fraction of the whole block,
 * docs/architecture.md "A block's transactions from the pending pool") and its transactions come from the
 * pool. A block with a transaction the pool did not see is read whole, and so is the next block until one
 * read whole would have been complete from the pool: where most transactions never pass the public pool,
 * no block costs a second request.
 */
export function createAnnouncedBlockReader(reader: ChainReader, pool: PendingPool): (header: BlockHeader) => Promise<FullBlock | null> {
  let poolServes = true
  return async (header) => {
    if (pool.subscribed && poolServes) {
      const thin = await reader.blockWithHashes(header.hash)
      const pooled = thin && fullBlockFrom(thin, (hash) => pool.get(hash))
      if (pooled) {
        pool.forget(thin.transactionHashes)
        return pooled
      }
      poolServes = false
    }
    const block = await reader.block(header.number)
    if (block) {
      const hashes = block.transactions.map((tx) => tx.hash)
      poolServes = hashes.every((hash) => pool.get(hash) !== undefined)
      pool.forget(hashes)
    }
    return block
  }
}
