import { TransactionReceiptNotFoundError, formatTransactionReceipt, type Hash, type PublicClient, type TransactionReceipt } from 'viem'
import { isMethodUnavailable } from '../chain/errors.ts'

type RawReceipt = Parameters<typeof formatTransactionReceipt>[0]

/** Blocks' receipts kept per provider (the newest): a block's verdicts are confirmed together, or within a few blocks. */
const KEPT_BLOCKS = 4
/**
 * Blocks announced in a row whose receipts were asked at their announcement and no verdict of theirs came
 * (a chain where payments are rare, or wait for more confirmations than one): then no more are asked so
 * until a verdict on one of the newest two blocks asks for its receipts (it paid a round trip for them).
 */
const IDLE_AFTER = 16

export interface QuorumReceipts {
  /**
   * Provider `i`'s receipt of `hash`, which the judged evidence places in block `blockHash`: taken from that
   * block's receipts, asked of the provider once for every verdict that needs them. A provider that does
   * not know that block, or places the transaction elsewhere, or does not offer `eth_getBlockReceipts`, is
   * asked for the receipt itself: its own view is its vote. Null: the provider does not know the receipt.
   */
  receipt(i: number, hash: string, blockHash: string | undefined): Promise<TransactionReceipt | null>
  /**
   * Block `blockHash` was announced: `voters` are asked for its receipts now, for the verdicts it may carry
   * (those that offer the method), unless `IDLE_AFTER` blocks in a row were asked so and no verdict came in
   * any of them.
   */
  prepare(voters: readonly number[], blockHash: string): void
  /** Whether provider `i`'s receipts of block `blockHash` are asked already (held, or on their way). */
  asked(i: number, blockHash: string): boolean
}

/**
 * The quorum's receipts, one request per provider and block rather than one per verdict: a block of ten
 * payments costs the quorum one `eth_getBlockReceipts` per provider it asks, as the block's own read does
 * (docs/architecture.md, "Where is the quorum?"). Receipts are formatted only when asked for.
 */
export function createQuorumReceipts(clients: readonly PublicClient[]): QuorumReceipts {
  const blocks = new Map<string, Promise<Map<string, RawReceipt> | null>>()
  const unsupported = new Set<number>()
  /** The newest two blocks announced, and how many in a row were asked for at their announcement to no verdict. */
  const announced: string[] = []
  let idle = 0

  const ofBlock = (i: number, blockHash: string): Promise<Map<string, RawReceipt> | null> => {
    const key = `${i}:${blockHash.toLowerCase()}`
    let read = blocks.get(key)
    if (!read) {
      read = (
        clients[i]!.request({ method: 'eth_getBlockReceipts', params: [blockHash as Hash] } as never) as Promise<RawReceipt[] | null>
      ).then((raw) => (raw ? new Map(raw.map((receipt) => [String(receipt.transactionHash).toLowerCase(), receipt])) : null))
      blocks.set(key, read)
      if (blocks.size > KEPT_BLOCKS * clients.length) blocks.delete(blocks.keys().next().value!)
      // A failure is this time's: the next verdict asks again. A provider without the method is asked for single receipts.
      read.catch((error: unknown) => {
        blocks.delete(key)
        if (isMethodUnavailable(error)) unsupported.add(i)
      })
    }
    return read
  }

  const single = (i: number, hash: string) =>
    clients[i]!.getTransactionReceipt({ hash: hash as Hash }).catch((error) => {
      if (error instanceof TransactionReceiptNotFoundError) return null
      throw error
    })

  return {
    async receipt(i, hash, blockHash) {
      if (blockHash !== undefined && announced.includes(blockHash.toLowerCase())) idle = 0
      if (blockHash === undefined || unsupported.has(i)) return single(i, hash)
      let inBlock: Map<string, RawReceipt> | null
      try {
        inBlock = await ofBlock(i, blockHash)
      } catch (error) {
        if (!isMethodUnavailable(error)) throw error
        return single(i, hash)
      }
      const raw = inBlock?.get(hash.toLowerCase())
      return raw ? formatTransactionReceipt(raw) : single(i, hash)
    },
    asked: (i, blockHash) => blocks.has(`${i}:${blockHash.toLowerCase()}`),
    prepare(voters, blockHash) {
      announced.unshift(blockHash.toLowerCase())
      announced.length = Math.min(announced.length, 2)
      if (idle >= IDLE_AFTER) return
      idle++
      for (const i of voters) if (!unsupported.has(i)) void ofBlock(i, blockHash).catch(() => {})
    },
  }
}
