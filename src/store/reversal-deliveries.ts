import { sql } from 'kysely'
import type { Tracking } from '../domain/tracking.ts'
import type { Db } from './infrastructure/database.ts'
import { insertDeliveries } from './delivery-rows.ts'
import { rowToTracking, type TrackingRow } from './trackings.ts'

export type ReversalEventName = 'payment.reverted' | 'payment.reconfirmed'

/** One recorded reversal event: the tracking as written, and whether its callback goes out. */
export interface ReversalEvent {
  event: ReversalEventName
  tracking: Tracking
  /** Its integration opted in (`reversal_events`) and it has a callback URL: a due delivery; else `skipped`. */
  sent: boolean
}

/**
 * Records a reversal event of each tracking (docs/api.md §8), inside the caller's transaction: the record's
 * `reverted_at` (set by `payment.reverted`, cleared by `payment.reconfirmed`; `reverted_ever` from then on)
 * and one event delivery, due now when the tracking's integration opted in, else `skipped` (in the
 * delivery log, never sent).
 */
export async function recordReversalEvents(db: Db, trackingIds: string[], event: ReversalEventName, now: Date): Promise<ReversalEvent[]> {
  if (trackingIds.length === 0) return []
  const rows = await sql<TrackingRow & { opted_in: boolean | null }>`
    UPDATE trackings AS t SET reverted_at = ${event === 'payment.reverted' ? now : null}::timestamptz, reverted_ever = TRUE, updated_at = ${now}
    WHERE t.id IN (${sql.join(trackingIds)})
    RETURNING t.*, (SELECT i.reversal_events FROM integrations i WHERE i.id = t.integration_id) AS opted_in`.execute(db)
  const events = rows.rows.map((row) => ({ event, tracking: rowToTracking(row), sent: row.opted_in === true && row.callback !== null }))
  await insertDeliveries(
    db,
    events.map((e) => ({ trackingId: e.tracking.id, reason: 'event', event, skipped: !e.sent })),
    now,
  )
  return events
}
