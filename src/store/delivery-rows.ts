import type { Insertable, Selectable } from 'kysely'
import type { Db } from './infrastructure/database.ts'
import { newId } from './ids.ts'
import type { DeliveriesTable, RedeliveryRequester } from './schema.ts'

/**
 * A claim and its lease: rows inserted under it belong to that worker from their first moment, and their
 * attempt starts as they commit, so its start (`sending_at`) is written with them: no statement stands
 * between a verdict's commit and its callback's request (`ClaimedDelivery.startWritten`).
 */
export interface DeliveryLease {
  claim: string
  until: Date
}

/** What starts a delivery: the judged payment's callback, an operator's or integrator's redelivery, or an event. */
export type NewDelivery =
  | { trackingId: string; reason: 'completed' }
  /** `requestedBy`: who asked for it (the operator's timeline shows it). */
  | { trackingId: string; reason: 'redeliver'; requestedBy: RedeliveryRequester }
  /** A reversal event (docs/api.md §8); `skipped` (not opted in) is recorded in the log and never sent. */
  | { trackingId: string; reason: 'event'; event: string; skipped: boolean }

/**
 * The one insert of delivery rows (payment callbacks, redeliveries, reversal events), so that every delivery
 * starts with the same columns: due now (`next_attempt_at` and `due_at`, which the queue's overdue age reads),
 * or, for a skipped event, finished at once; with `lease`, claimed by that worker until its end (the
 * claim query's columns) with its attempt started. Runs in the caller's transaction when given one.
 */
export async function insertDeliveries(
  db: Db,
  deliveries: readonly NewDelivery[],
  now: Date,
  lease?: DeliveryLease,
): Promise<Selectable<DeliveriesTable>[]> {
  if (deliveries.length === 0) return []
  return deliveryRowsInsert(db, newDeliveryRows(deliveries, now, lease))
    .returningAll()
    .execute()
}

/** The rows `insertDeliveries` writes, ids included (a caller that composes the insert into a larger statement knows them before it runs). */
export function newDeliveryRows(deliveries: readonly NewDelivery[], now: Date, lease?: DeliveryLease): Insertable<DeliveriesTable>[] {
  return deliveries.map((delivery) => {
    const skipped = delivery.reason === 'event' && delivery.skipped
    return {
      id: newId(),
      tracking_id: delivery.trackingId,
      reason: delivery.reason,
      event: delivery.reason === 'event' ? delivery.event : null,
      requested_by: delivery.reason === 'redeliver' ? delivery.requestedBy : null,
      state: skipped ? ('skipped' as const) : ('due' as const),
      finished_at: skipped ? now : null,
      next_attempt_at: lease && !skipped ? lease.until : now,
      ...(lease && !skipped ? { claimed_by: lease.claim, claimed_at: now, locked_until: lease.until, sending_at: now } : {}),
      due_at: now,
      created_at: now,
      updated_at: now,
    }
  })
}

/** The insert of rows made by `newDeliveryRows`, unexecuted (a part of a completion's one statement, completion-writes.ts). */
export function deliveryRowsInsert(db: Db, rows: Insertable<DeliveriesTable>[]) {
  return db.insertInto('deliveries').values(rows)
}
