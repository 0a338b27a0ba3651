import type { FullBlock } from '../chain/chain-reader.ts'
import type { WindowView } from './block-follower.ts'
import type { BlockHeader } from '../domain/block-window.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { findBlockCandidates, type BlockCandidates, type PendingKinds } from '../store/block-candidates.ts'
import type { SuccessWatch } from '../store/success-watches.ts'
import type { MatchStore } from '../store/tracking-matches.ts'
import type { ReceiptsAhead, ReceiptSource } from './block-evidence.ts'
import type { SuccessWatcher } from './success-watch.ts'

/** What the follow-up of a block reads: trackings matched in earlier blocks, and successes whose block is not final yet. */
export interface AroundReads {
  matched: Awaited<ReturnType<MatchStore['matched']>>
  watched: SuccessWatch[]
}

export interface BlockReads {
  /**
   * The next block's header is known before the block is read (a `newHeads` notification, or the head
   * right after the window's tip): its own reads start now, beside the block's read.
   */
  prepare(header: BlockHeader): void
  /**
   * The receipts of `block`'s own payments: those prepared for its hash, else started now: read ahead in one
   * request for the RPC's newest block while the chain has pending trackings: the receipts its logs tell, or
   * every receipt while native nonce-less traces are pending (undefined: not read ahead, or not to be had in
   * one request).
   */
  start(block: FullBlock, latest: boolean): { receipts: Promise<ReceiptsAhead | undefined> }
  /** The block's candidates and what the chain has pending (one statement); the next reads ahead go by the latter. */
  candidates(block: FullBlock): Promise<BlockCandidates>
  /** The follow-up's reads for `block`, once its own verdicts are written (chain-processor.ts); `window`: the follower's. */
  around(block: { number: bigint; hash: string }, finalized: bigint, window: WindowView | undefined): Promise<AroundReads>
}

/**
 * The reads of a block that can start before its transactions are known, so that a payment found in the
 * newest block waits for the block's read and its candidates' query alone; the follow-up's reads (matched
 * trackings, watched successes) come after its verdicts are written. Everything read ahead is judged again
 * on the next block: a fast-path write landing between the read and the block (the runner's `exclusive`)
 * is seen one block later, as it would be had it landed just after the block.
 */
export function createBlockReads(deps: {
  chain: string
  db: Db
  matches: MatchStore
  receipts: ReceiptSource
  successes: SuccessWatcher
  /** Other reads of a block that may carry payments, started with its own (the quorum's, evidence-quorum.ts). */
  alsoAhead?: (blockHash: string) => void
}): BlockReads {
  /** What the chain had pending at the last block (a read ahead of receipts pays off only with pending trackings). */
  let pendingSeen: PendingKinds = { any: true, traces: false, nativeTraces: false, pastDeadline: false }
  let prepared: { hash: string; receipts: Promise<ReceiptsAhead | undefined> } | undefined
  const none = Promise.resolve(undefined)
  // A block's logs are lighter than its receipts, for the provider and for this thread (docs/architecture.md,
  // "A block's logs for its receipts"), and tell every payment that logged. A native trace may be paid by a
  // transaction without a log, whose receipt would then be read after the traces' query: while one is
  // pending, the receipts are read whole beside the block instead. Whichever the RPC does not give, the other.
  const readAhead = async (hash: string): Promise<ReceiptsAhead | undefined> => {
    const receipts = () => deps.receipts.whole(hash).then((whole) => whole && { whole })
    const logs = () => deps.receipts.logged(hash).then((logged) => logged && { logged })
    if (pendingSeen.nativeTraces) return (await receipts()) ?? logs()
    return (await logs()) ?? (pendingSeen.traces ? receipts() : undefined)
  }

  return {
    prepare(header) {
      if (pendingSeen.any) deps.alsoAhead?.(header.hash)
      const receipts = pendingSeen.any ? readAhead(header.hash) : none
      prepared = { hash: header.hash.toLowerCase(), receipts }
    },
    start(block, latest) {
      const early = prepared?.hash === block.hash.toLowerCase() ? prepared : undefined
      prepared = undefined
      if (early) return early
      const ahead = latest && pendingSeen.any && block.transactions.length > 1
      if (ahead) deps.alsoAhead?.(block.hash)
      return { receipts: ahead ? readAhead(block.hash) : none }
    },
    async candidates(block) {
      const found = await findBlockCandidates(
        deps.db,
        deps.chain,
        block.transactions.map((tx) => ({ sender: tx.from, nonce: BigInt(tx.nonce), hash: tx.hash })),
        block.timestamp,
      )
      pendingSeen = found.pending
      return found
    },
    async around(block, finalized, window) {
      const [matched, watched] = await Promise.all([deps.matches.matched(deps.chain), deps.successes.read(block, finalized, window)])
      return { matched, watched }
    },
  }
}
