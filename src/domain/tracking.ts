import type { FailedReason } from './failed-reasons.ts'

export { failedReasons, type FailedReason } from './failed-reasons.ts'

export type TrackingStatus = 'pending' | 'success' | 'failed'
export type Commitment = 'confirmed' | 'finalized'
export type Shape = 'current' | 'earlier'

/** A payment tracking as the domain sees it; addresses and hashes lower-case. */
export interface Tracking {
  id: string
  accountId: string
  secretId: string
  shape: Shape
  blockchain: string
  /** Null until known for a nonce-less tracking (docs/api.md, "Payments without a nonce"). */
  sender: string | null
  nonce: bigint | null
  receiver: string
  token: string
  decimals: number
  commitment: Commitment
  confirmations: number
  afterBlock: bigint
  /** Unix seconds: a nonce-less payment must be mined in a block at or before it (null: none). */
  deadline: bigint | null
  /** Created without a nonce: identified by secret_id, matched by receiver until its transaction is known. */
  nonceless: boolean
  amount: string
  feeAmount: string | null
  feeReceiver: string | null
  transaction: string | null
  payload: Record<string, unknown> | null
  callback: string | null
  forwardTo: string | null
  forwardOnFailure: boolean
  integrationId: string | null
  linkId: string | null
  shop: string | null
  shopifyPaymentId: string | null
  status: TrackingStatus
  failedReason: FailedReason | null
  release: boolean
  confirmedAt: Date | null
  /** When the waiting user was released (not part of the record; the operator's timeline shows it). */
  releasedAt?: Date | null
  /**
   * docs/api.md §8: when the paying transaction left the chain after success (null once reconfirmed);
   * `revertedEver` puts `reverted_at` on the record.
   */
  revertedAt?: Date | null
  revertedEver?: boolean
  createdAt: Date
  updatedAt: Date
}
