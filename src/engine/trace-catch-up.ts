import type { ChainReader } from '../chain/chain-reader.ts'
import { RetryableChainError } from '../chain/errors.ts'
import type { EvidenceReader } from '../chain/payment-evidence.ts'
import { judge } from '../domain/judge.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { WriteFence } from '../store/chain-leases.ts'
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

/** The blocks a catch-up reads, from `from` up to `upTo` (later ones are the follower's), and the chain's position. */
export interface CatchUpRange {
  from: bigint
  upTo: bigint
  head: bigint
  finalized: bigint
  /** The lease the follower writes under, when the catch-up runs in a block's turn. */
  fence?: WriteFence
}

/**
 * A nonce-less trace matched by receiver in blocks the follower passed without it: those blocks are
 * matched for it now, oldest first, at most `maxBlocks` of them. That is a trace created after the
 * follower passed its `after_block` (the widget creates its tracking within a few blocks of paying), and
 * a trace whose found payment was dropped (the blocks passed while it was matched). Returns whether a
 * payment or the deadline was found (then judged); RPC failures throw, for the caller to try again.
 */
export async function catchUpTrace(deps: TraceCatchUpDeps, tracking: Tracking, range: CatchUpRange): Promise<boolean> {
  const { from, upTo, head, finalized, fence } = range
  const last = from + BigInt(deps.maxBlocks ?? 64) - 1n
  const position = { head, finalized, canonical: true }
  const expectation = expectationOf(tracking)
  for (let number = from; number <= upTo && number <= last; number++) {
    const block = await deps.reader.block(number)
    // The follower passed it, so the chain has it: a provider behind it, to be asked again later.
    if (!block) throw new RetryableChainError(`the RPC does not have block ${number} yet`)
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
      await deps.verdicts.apply(tracking, expectation, judgement, match, false, fence)
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
    await deps.verdicts.apply(tracking, expectation, judgement, mine.match, false, fence)
    return true
  }
  return false
}
