import type { ChainReader } from '../chain/chain-reader.ts'
import type { EvidenceReader } from '../chain/payment-evidence.ts'
import { judge } from '../domain/judge.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { findClaimedTransactions } from '../store/nonceless-trackings.ts'
import type { ReceiptSource } from './block-evidence.ts'
import { expectationOf, paysNative } from './expectation.ts'
import { matchReceivers, receiverReceipts } from './receiver-match.ts'
import type { Verdicts } from './verdicts.ts'

export interface TraceCatchUpDeps {
  chain: string
  db: Db
  reader: ChainReader
  evidence: EvidenceReader
  receipts: ReceiptSource
  verdicts: Verdicts
  /** Most blocks read for one new trace (a block and its logs, or its receipts for a native trace, each). */
  maxBlocks?: number
}

/**
 * A nonce-less trace created after the follower passed blocks it may be paid in (its `after_block` is
 * below the processed block): those blocks are matched by receiver for it now, oldest first, at most
 * `maxBlocks` of them (the widget creates its tracking within a few blocks of paying). Blocks after
 * `upTo` are the follower's. Returns whether a payment or the deadline was found (then judged).
 */
export async function catchUpTrace(
  deps: TraceCatchUpDeps,
  tracking: Tracking,
  upTo: bigint,
  head: bigint,
  finalized: bigint,
): Promise<boolean> {
  const last = tracking.afterBlock + BigInt(deps.maxBlocks ?? 64)
  const position = { head, finalized, canonical: true }
  const expectation = expectationOf(tracking)
  for (let number = tracking.afterBlock + 1n; number <= upTo && number <= last; number++) {
    const block = await deps.reader.block(number)
    if (!block) return false
    if (tracking.deadline !== null && block.timestamp > tracking.deadline) {
      const pastDeadline = { blockNumber: block.number }
      const judgement = judge(expectation, { given: null, consumer: null, pastDeadline, position })
      const match = {
        trackingId: tracking.id,
        chain: deps.chain,
        blockNumber: block.number,
        blockHash: block.hash.toLowerCase(),
        transaction: '',
        evidence: { given: null, consumer: null, pastDeadline },
        pendingHashes: null,
      }
      await deps.verdicts.apply(tracking, expectation, judgement, match, false)
      return true
    }
    if (block.transactions.length === 0) continue
    const receipts = await receiverReceipts(deps.receipts, block, { native: paysNative(tracking) })
    const taken = await findClaimedTransactions(
      deps.db,
      tracking.accountId,
      deps.chain,
      block.transactions.map((tx) => tx.hash),
    )
    const claimed = new Set([...taken].map((hash) => `${tracking.accountId}\n${hash}`))
    const findings = await matchReceivers(deps, block, receipts, claimed)
    const mine = findings.find((f) => f.tracking.id === tracking.id)
    if (!mine) continue
    const judgement = judge(expectation, { given: null, consumer: mine.paying, position })
    await deps.verdicts.apply(tracking, expectation, judgement, mine.match, false)
    return true
  }
  return false
}
