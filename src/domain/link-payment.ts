import { getAddress } from 'viem'
import type { Tracking } from './tracking.ts'

/**
 * Earlier link payment record (docs/api.md, records and endpoints), sent by GET /links/{link_id}/payments without
 * `x-api-version`: `payload` is a string holding the serialized JSON (null when there is none).
 */
export function earlierLinkRecord(t: Tracking): Record<string, unknown> {
  return {
    status: t.status,
    failed_reason: t.status === 'failed' ? t.failedReason : null,
    blockchain: t.blockchain,
    transaction: t.transaction,
    sender: getAddress(t.sender),
    receiver: getAddress(t.receiver),
    token: getAddress(t.token),
    amount: t.amount,
    payload: t.payload === null ? null : JSON.stringify(t.payload),
    confirmed_at: t.confirmedAt ? t.confirmedAt.toISOString() : null,
  }
}

/** Payments per GET /links/{link_id}/payments response (docs/api.md, records and endpoints). */
export const LINK_PAYMENTS_PAGE_SIZE = 10
