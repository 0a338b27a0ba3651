import type { Address, Transaction } from 'viem'
import type { ChainReader, FullBlock } from '../chain/chain-reader.ts'
import { isTransient } from '../chain/errors.ts'
import { findConsumer } from '../chain/payment-evidence.ts'

export interface Located {
  block: FullBlock
  tx: Transaction
}

export interface LocateOptions {
  /** Most blocks a linear scan reads when the RPC has no historical state for a binary search. */
  maxScanBlocks?: number
  /** Blocks read at once by the linear scan. */
  scanConcurrency?: number
}

/**
 * Finds the mined transaction of (sender, nonce) between `afterBlock` and `head`, for a payment
 * tracked after it was mined. The sender's transaction count at a block says whether the nonce was
 * consumed by then, so a binary search over blocks needs about log2(blocks) calls; an RPC without
 * historical state answers that with an error, and then the blocks from `afterBlock` on are read
 * one by one (at most `maxScanBlocks`). A nonce consumed at or before `afterBlock` is still found by
 * the binary search (the payment transaction is by definition the one that consumed it).
 */
export async function locateConsumer(
  reader: ChainReader,
  sender: Address,
  nonce: bigint,
  afterBlock: bigint,
  head: bigint,
  options: LocateOptions = {},
): Promise<Located | null> {
  const consumedBy = async (block: bigint) => (await reader.transactionCount(sender, block)) > nonce
  try {
    if (!(await consumedBy(head))) return null
    let low = afterBlock + 1n > head ? head : afterBlock + 1n
    if (low > 0n && (await consumedBy(low - 1n))) low = 0n
    let high = head
    while (low < high) {
      const middle = (low + high) / 2n
      if (await consumedBy(middle)) high = middle
      else low = middle + 1n
    }
    return await inBlock(reader, low, sender, nonce)
  } catch (error) {
    if (isTransient(error)) throw error
    // No historical state (a pruned node): read the blocks themselves.
    return scan(reader, sender, nonce, afterBlock + 1n, head, options)
  }
}

async function inBlock(reader: ChainReader, number: bigint, sender: Address, nonce: bigint): Promise<Located | null> {
  const block = await reader.block(number)
  if (!block) return null
  const tx = findConsumer(block.transactions, sender, nonce)
  return tx ? { block, tx } : null
}

async function scan(
  reader: ChainReader,
  sender: Address,
  nonce: bigint,
  from: bigint,
  to: bigint,
  options: LocateOptions,
): Promise<Located | null> {
  const max = BigInt(options.maxScanBlocks ?? 2_000)
  const step = BigInt(options.scanConcurrency ?? 8)
  const last = to - from + 1n > max ? from + max - 1n : to
  for (let start = from; start <= last; start += step) {
    const numbers: bigint[] = []
    for (let n = start; n <= last && n < start + step; n++) numbers.push(n)
    const found = await Promise.all(numbers.map((n) => inBlock(reader, n, sender, nonce)))
    const hit = found.find((f) => f !== null)
    if (hit) return hit
  }
  return null
}
