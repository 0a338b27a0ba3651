import type { PaymentRequest } from './payment-request.ts'
import type { Tracking } from './tracking.ts'

export type Repeat = { kind: 'same' } | { kind: 'attach-transaction'; transaction: string } | { kind: 'conflict'; detail: string }

/**
 * A create request for a payment that already has a tracking (same account, blockchain, sender and
 * nonce, or the same secret): answered with the stored record when it describes the same payment,
 * a conflict otherwise (docs/api.md §3).
 */
export function compareRepeat(existing: Tracking, request: PaymentRequest): Repeat {
  if (existing.secretId !== request.secretId) {
    return { kind: 'conflict', detail: 'this payment (blockchain, sender, nonce) is already tracked under another secret_id' }
  }
  const differing: string[] = []
  const same = (field: string, a: unknown, b: unknown) => {
    if (a !== b) differing.push(field)
  }
  same('blockchain', existing.blockchain, request.blockchain)
  if (existing.nonceless) {
    // Identified by secret_id alone: its sender and nonce are filled in once its transaction is known,
    // so a repeat without them (or with the sender it was created with, or found to have) is the same.
    same('nonce', null, request.nonce)
    if (request.sender !== null) same('sender', existing.sender, request.sender)
    same('deadline', existing.deadline, request.deadline)
  } else {
    same('sender', existing.sender, request.sender)
    same('nonce', existing.nonce, request.nonce)
  }
  same('receiver', existing.receiver, request.receiver)
  same('token', existing.token, request.token)
  same('amount', existing.amount, request.amount)
  same('fee_amount', existing.feeAmount, request.feeAmount)
  same('fee_receiver', existing.feeReceiver, request.feeReceiver)
  same('commitment', existing.commitment, request.commitment)
  same('confirmations', existing.confirmations, request.confirmations)
  // Once judged, the record's transaction may be the one that replaced the given one (speed-up).
  if (existing.status === 'pending' && existing.transaction !== null && request.transaction !== null) {
    same('transaction', existing.transaction, request.transaction)
  }
  if (differing.length > 0) {
    return { kind: 'conflict', detail: `this secret_id is already used for a payment with other ${differing.join(', ')}` }
  }
  if (existing.transaction === null && request.transaction !== null) {
    return { kind: 'attach-transaction', transaction: request.transaction }
  }
  return { kind: 'same' }
}
