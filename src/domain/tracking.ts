import { checksumAddress as checksum } from './eip55.ts'

export type TrackingStatus = 'pending' | 'success' | 'failed'
export type Commitment = 'confirmed' | 'finalized'
export type Shape = 'current' | 'earlier'

export const failedReasons = [
  'FAILED',
  'MISMATCH',
  'TRANSACTION_MISMATCH',
  'TOKEN_MISMATCH',
  'SENDER_MISMATCH',
  'RECEIVER_MISMATCH',
  'NONCE_MISMATCH',
  'AMOUNT_MISMATCH',
  'TRACKING_TIMED_OUT',
] as const
export type FailedReason = (typeof failedReasons)[number]

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

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null)

// Node 22+ (V8): a value JSON.stringify writes as the given JSON text. Not yet in TypeScript's lib.
declare global {
  interface JSON {
    rawJSON(text: string): unknown
  }
}

/**
 * A JSON number with every digit of `n`: the earlier shape echoes nonce and after_block as numbers,
 * and a JavaScript number would round anything above 2^53 (the echo must be the stored value).
 */
const exactNumber = (n: bigint): unknown => {
  const number = Number(n)
  return Number.isSafeInteger(number) ? number : JSON.rawJSON(n.toString())
}

const nullableChecksum = (address: string | null): string | null => (address === null ? null : checksum(address))

/** `deadline` is a JSON integer in both shapes (Unix seconds), or null. */
const exactDeadline = (t: Tracking): unknown => (t.deadline === null ? null : exactNumber(t.deadline))

/** Full record, current shape (docs/api.md, records and endpoints), field order as documented. */
export function currentRecord(t: Tracking): Record<string, unknown> {
  return {
    status: t.status,
    ...(t.status === 'failed' ? { failed_reason: t.failedReason } : {}),
    blockchain: t.blockchain,
    transaction: t.transaction,
    sender: nullableChecksum(t.sender),
    nonce: t.nonce === null ? null : t.nonce.toString(),
    receiver: checksum(t.receiver),
    token: checksum(t.token),
    decimals: t.decimals,
    commitment: t.commitment,
    confirmations: t.confirmations,
    after_block: t.afterBlock.toString(),
    deadline: exactDeadline(t),
    amount: t.amount,
    fee_amount: t.feeAmount,
    fee_receiver: t.feeReceiver ? checksum(t.feeReceiver) : null,
    payload: t.payload,
    secret_id: t.secretId,
    callback: t.callback,
    release: t.release,
    forward_to: t.forwardTo,
    forward_on_failure: t.forwardOnFailure,
    confirmed_at: iso(t.confirmedAt),
    created_at: iso(t.createdAt),
    updated_at: iso(t.updatedAt),
    ...revertedField(t),
  }
}

/** Full record, earlier `uuid` shape: numeric nonce/after_block, no decimals/commitment/fee fields. */
export function earlierRecord(t: Tracking): Record<string, unknown> {
  return {
    status: t.status,
    ...(t.status === 'failed' ? { failed_reason: t.failedReason } : {}),
    blockchain: t.blockchain,
    transaction: t.transaction,
    sender: nullableChecksum(t.sender),
    nonce: t.nonce === null ? null : exactNumber(t.nonce),
    receiver: checksum(t.receiver),
    token: checksum(t.token),
    confirmations: t.confirmations,
    after_block: exactNumber(t.afterBlock),
    deadline: exactDeadline(t),
    amount: t.amount,
    payload: t.payload,
    uuid: t.secretId,
    callback: t.callback,
    release: t.release,
    forward_to: t.forwardTo,
    forward_on_failure: t.forwardOnFailure,
    confirmed_at: iso(t.confirmedAt),
    created_at: iso(t.createdAt),
    updated_at: iso(t.updatedAt),
    ...revertedField(t),
  }
}

/** `reverted_at` only on trackings that were ever reverted (docs/api.md §8): other records keep their shape. */
const revertedField = (t: Tracking): Record<string, unknown> => (t.revertedEver ? { reverted_at: iso(t.revertedAt ?? null) } : {})

/** The record in the shape the tracking was created with (responses and callbacks). */
export function fullRecord(t: Tracking): Record<string, unknown> {
  return t.shape === 'earlier' ? earlierRecord(t) : currentRecord(t)
}

/** Payment summary record (docs/api.md, records and endpoints), used with `x-api-version`. */
export function summaryRecord(t: Tracking): Record<string, unknown> {
  return {
    blockchain: t.blockchain,
    transaction: t.transaction,
    sender: nullableChecksum(t.sender),
    receiver: checksum(t.receiver),
    token: checksum(t.token),
    amount: t.amount,
    payload: t.payload,
    after_block: t.afterBlock.toString(),
    commitment: t.commitment,
    confirmations: t.confirmations,
    created_at: iso(t.createdAt),
    confirmed_at: iso(t.confirmedAt),
  }
}
