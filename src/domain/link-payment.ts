import { EARLIER_LINK_RECORD } from './record-fields.ts'
import { buildRecord } from './record-table.ts'
import { FieldErrors } from './field-errors.ts'
import { FieldReader, type FieldTable, type ParseResult } from './request-fields.ts'
import type { Tracking } from './tracking.ts'

/** Earlier link payment record (docs/api.md, records and endpoints): the table in src/domain/record-fields.ts. */
export const earlierLinkRecord = (t: Tracking): Record<string, unknown> => buildRecord(EARLIER_LINK_RECORD, t)

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
