// The shapes of a batch of verdicts, shared by its two forms: complete-tracking.ts (read under lock, then
// written) and complete-at-once.ts (one statement).
import type { FailedReason, Tracking } from '../domain/tracking.ts'
import type { WriteFence } from './chain-leases.ts'
import type { WritePart } from './completion-writes.ts'
import type { DeliveryLease } from './delivery-rows.ts'
import type { Db } from './infrastructure/database.ts'

export type Completion =
  /** `inclusion`: the paying transaction's block, watched until it is final (see success-watches.ts). */
  /**
   * `identity`: a nonce-less tracking's paying transaction's sender and nonce, filled in with the success
   * (docs/api.md, "Payments without a nonce").
   */
  | {
      status: 'success'
      transaction: string
      inclusion?: { chain: string; blockNumber: bigint; blockHash: string }
      identity?: { sender: string; nonce: bigint }
    }
  | { status: 'failed'; failedReason: FailedReason; transaction?: string | null }

/** One tracking to complete; `dropMatch`: its stored match goes in the same transaction. */
export interface CompletionRequest {
  id: string
  completion: Completion
  dropMatch?: boolean
  /**
   * The tracking as the caller read it while pending (its link and callback do not change). Given for
   * every request of a batch, the batch may be written in one statement (complete-at-once.ts); only outside
   * a transaction, which that statement's failure (before the long way) would abort.
   */
  asRead?: Pick<Tracking, 'linkId' | 'callback'>
}

/** A completed tracking and its callback's delivery row (null: it has no callback). */
export interface Completed {
  tracking: Tracking
  deliveryId: string | null
}

export interface CompletionOptions {
  /** The chain follower's lease: nothing is written unless this node still holds it. */
  fence?: WriteFence
  /** Written with the completions (the block the verdicts were judged on, as processed). */
  alsoWrite?: (trx: Db) => WritePart
  /** The delivery rows are inserted claimed by this worker (a hand-off, delivery-rows.ts). */
  lease?: DeliveryLease
}
