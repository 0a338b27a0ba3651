import { CURRENT_RECORD, EARLIER_RECORD, SUMMARY_RECORD } from './record-fields.ts'
import { buildRecord } from './record-table.ts'
import type { Tracking } from './tracking.ts'

/** The records a tracking is answered and called back with, each built by its field table (src/domain/record-fields.ts). */

/** Full record, current shape (docs/api.md, records and endpoints): the table in src/domain/record-fields.ts. */
export const currentRecord = (t: Tracking): Record<string, unknown> => buildRecord(CURRENT_RECORD, t)

/** Full record, earlier `uuid` shape: numeric nonce/after_block, no decimals/commitment/fee fields. */
export const earlierRecord = (t: Tracking): Record<string, unknown> => buildRecord(EARLIER_RECORD, t)

/** The record in the shape the tracking was created with (responses and callbacks). */
export function fullRecord(t: Tracking): Record<string, unknown> {
  return t.shape === 'earlier' ? earlierRecord(t) : currentRecord(t)
}

/** Payment summary record (docs/api.md, records and endpoints), used with `x-api-version`. */
export const summaryRecord = (t: Tracking): Record<string, unknown> => buildRecord(SUMMARY_RECORD, t)
