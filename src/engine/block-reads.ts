import type { TransactionReceipt } from 'viem'
import type { FullBlock } from '../chain/chain-reader.ts'
import type { BlockHeader } from '../domain/block-window.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { pendingOnChain } from '../store/nonceless-trackings.ts'
import type { SuccessWatch } from '../store/success-watches.ts'
import type { MatchStore } from '../store/tracking-matches.ts'
import type { ReceiptSource } from './block-evidence.ts'
import type { SuccessWatcher } from './success-watch.ts'

/** What judging a block reads besides its candidates: none of it depends on the block's transactions. */
export interface AroundReads {
  /** Trackings matched in earlier blocks, re-judged with this one. */
  matched: Awaited<ReturnType<MatchStore['matched']>>
  /** Successes whose block is not final yet. */
  watched: SuccessWatch[]
  pending: { any: boolean; traces: boolean }
}

export interface BlockReads {
  /**
   * The next block's header is known before the block is read (a `newHeads` notification, or the head
   * right after the window's tip): its reads start now, beside the block's own read.
   */
  prepare(header: BlockHeader): void
  /**
   * The reads of `block`: those prepared for its hash, else started now. `receipts`: the whole block's
   * receipts in one request, read ahead for the RPC's newest block while the chain has pending trackings
   * (undefined: not read ahead, or not to be had in one request).
   */
  start(block: FullBlock, latest: boolean): { around: Promise<AroundReads>; receipts: Promise<Map<string, TransactionReceipt> | undefined> }
}

/**
 * The reads of a block that can start before its transactions are known, so that a payment found in the
 * newest block waits for the block's read and its candidates' query alone. Everything read ahead is
 * judged again on the next block: a fast-path write landing between the read and the block (the runner's
 * `exclusive`) is seen one block later, as it would be had it landed just after the block.
 */
export function createBlockReads(deps: {
  chain: string
  db: Db
  matches: MatchStore
  receipts: ReceiptSource
  successes: SuccessWatcher
}): BlockReads {
  /** Whether the chain had pending trackings at the last block (a read ahead of receipts pays off only then). */
  let pendingSeen = true
  let prepared: { hash: string; around: Promise<AroundReads>; receipts: Promise<Map<string, TransactionReceipt> | undefined> } | undefined

  const readAround = (): Promise<AroundReads> => {
    const around = Promise.all([deps.matches.matched(deps.chain), deps.successes.read(), pendingOnChain(deps.db, deps.chain)]).then(
      ([matched, watched, pending]) => {
        pendingSeen = pending.any
        return { matched, watched, pending }
      },
    )
    // Read ahead for a block that may not come (another branch): its failure is the awaiting block's, or nobody's.
    around.catch(() => {})
    return around
  }
  const none = Promise.resolve(undefined)

  return {
    prepare(header) {
      prepared = { hash: header.hash.toLowerCase(), around: readAround(), receipts: pendingSeen ? deps.receipts.whole(header.hash) : none }
    },
    start(block, latest) {
      const early = prepared?.hash === block.hash.toLowerCase() ? prepared : undefined
      prepared = undefined
      if (early) return early
      const ahead = latest && pendingSeen && block.transactions.length > 1
      return { around: readAround(), receipts: ahead ? deps.receipts.whole(block.hash) : none }
    },
  }
}
