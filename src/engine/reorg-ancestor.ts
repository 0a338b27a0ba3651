import type { ChainReader } from '../chain/chain-reader.ts'
import { RetryableChainError } from '../chain/errors.ts'
import type { BlockHeader, BlockWindow } from '../domain/block-window.ts'

/**
 * `from` is canonical but does not extend the window: walks back its parents (by hash, from the
 * RPC) to the newest block the window agrees on. Undefined when the reorg is deeper than every
 * block the window holds (below finality).
 */
export async function findCommonAncestor(reader: ChainReader, win: BlockWindow, from: BlockHeader): Promise<bigint | undefined> {
  let cursor: BlockHeader = from
  for (;;) {
    const parentNumber = cursor.number - 1n
    const ours = win.get(parentNumber)
    if (!ours) return undefined
    if (ours.hash === cursor.parentHash) return parentNumber
    const parent = await reader.headerByHash(cursor.parentHash)
    // The RPC (or the next URL after a failover) may not know the branch yet: worth asking again.
    if (!parent) throw new RetryableChainError(`the RPC does not know block ${cursor.parentHash} (parent of ${cursor.number})`)
    cursor = parent
  }
}
