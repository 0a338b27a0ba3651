import { getAddress } from 'viem'
import { FieldErrors } from './field-errors.ts'
import { FieldReader, type FieldTable, type ParseResult } from './request-fields.ts'
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
    sender: t.sender === null ? null : getAddress(t.sender),
    receiver: getAddress(t.receiver),
    token: getAddress(t.token),
    amount: t.amount,
    payload: t.payload === null ? null : JSON.stringify(t.payload),
    confirmed_at: t.confirmedAt ? t.confirmedAt.toISOString() : null,
  }
}

/** Payments per GET /links/{link_id}/payments response (docs/api.md, records and endpoints). */
export const LINK_PAYMENTS_PAGE_SIZE = 10

/**
 * The query of GET /links/{link_id}/payments: what parseLinkPaymentsQuery reads and the OpenAPI schema documents
 * (src/domain/request-fields.ts says why one table drives both).
 */
export const linkPaymentsQueryFields = {
  after: { kind: 'timestamp', description: 'only payments confirmed strictly after this ISO 8601 time' },
} as const satisfies FieldTable

/** Reads `after`: absent, or one ISO 8601 timestamp (a repeated `after` is not one). */
export function parseLinkPaymentsQuery(query: unknown): ParseResult<{ after: Date | null }> {
  const errors = new FieldErrors()
  const read = new FieldReader((query ?? {}) as Record<string, unknown>, errors, linkPaymentsQueryFields)
  const after = read.timestamp('after')
  return errors.empty ? { ok: true, value: { after } } : { ok: false, errors: errors.list }
}
