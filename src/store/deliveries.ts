import { sql, type Selectable } from 'kysely'
import type { Tracking } from '../domain/tracking.ts'
import type { Db } from './infrastructure/database.ts'
import { insertDeliveries, type DeliveryLease } from './delivery-rows.ts'
import type { DeliveriesTable, DeliveryAttemptsTable, RedeliveryRequester } from './schema.ts'
import { rowToTracking, type TrackingRow } from './trackings.ts'

export type DeliveryRow = Selectable<DeliveriesTable>
export type AttemptRow = Selectable<DeliveryAttemptsTable>

/** A delivery a worker holds the lease on, with its tracking as it is now. */
export interface ClaimedDelivery {
  id: string
  trackingId: string
  /** Attempts made before this one. */
  attempts: number
  claim: string
  tracking: Tracking
  /** Null for the payment callback; else the event it sends (docs/api.md §8: payment.reverted, payment.reconfirmed). */
  event?: string | null
  /** Its attempt's start was written with the row (a verdict's delivery taken at its commit): no mark before its request. */
  startWritten?: boolean
}

/**
 * A verdict's delivery as the worker takes it at the commit that inserted it under `lease`: no attempt
 * before, its start written with the row (delivery-rows.ts).
 */
export function handedOffDelivery(deliveryId: string, tracking: Tracking, lease: DeliveryLease): ClaimedDelivery {
  return { id: deliveryId, trackingId: tracking.id, attempts: 0, claim: lease.claim, tracking, event: null, startWritten: true }
}

/**
 * This node's delivery worker, taking the rows a verdict's transaction inserts straight from the writer:
 * they are inserted under its lease and, once committed, attempted at once, without a claim query
 * (the durable write still comes first: nothing is handed over before the commit).
 */
export interface DeliveryHandoff {
  /** The lease to insert rows under now; undefined while the worker takes none (stopped, or full). */
  lease(now: Date): DeliveryLease | undefined
  /** Rows committed under that lease: attempted now. Resolves once their requests are on their way (or will not be sent). */
  take(deliveries: ClaimedDelivery[]): Promise<void>
}

/** The attempt log's error for an attempt whose worker stopped before recording its outcome. */
export const INTERRUPTED_ATTEMPT_ERROR =
  'interrupted: the worker holding this delivery stopped before recording an outcome (its lease ran out); the receiver may or may not have got it'

/**
 * Claims up to `limit` due deliveries for one worker until `leaseUntil`, with their trackings, in one
 * statement. SKIP LOCKED lets any number of workers on any number of nodes claim at once without
 * waiting on, or taking, each other's rows. A claimed row's `next_attempt_at` becomes its lease end:
 * rows in hand drop out of the due range the claim scans, and a row whose worker died is due again
 * when its lease ends. Such a row still names the claim of the worker that died (an outcome clears it);
 * when that worker had started its attempt (`sending_at`, written by `markSending` right before the
 * request goes out), the cut-off attempt is logged here as failed, so every POST a receiver may have
 * seen has its record. A delivery claimed and never sent spends nothing: no attempt, no retry.
 */
export async function claimDueDeliveries(
  db: Db,
  options: { now: Date; leaseUntil: Date; limit: number; claim: string },
): Promise<ClaimedDelivery[]> {
  const { now, leaseUntil, limit, claim } = options
  const claimed = await sql<TrackingRow & { delivery_id: string; delivery_attempts: number; delivery_event: string | null }>`
    WITH picked AS (
      SELECT id, claimed_by, sending_at FROM deliveries
      WHERE state = 'due' AND next_attempt_at <= ${now} AND (locked_until IS NULL OR locked_until <= ${now}) AND paused_at IS NULL
      ORDER BY next_attempt_at
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED),
    claimed AS (
      UPDATE deliveries AS d SET locked_until = ${leaseUntil}, next_attempt_at = ${leaseUntil}, claimed_by = ${claim},
        claimed_at = ${now}, sending_at = NULL, attempts = d.attempts + (picked.sending_at IS NOT NULL)::integer,
        last_attempt_at = CASE WHEN picked.sending_at IS NULL THEN d.last_attempt_at ELSE picked.sending_at END,
        last_status_code = CASE WHEN picked.sending_at IS NULL THEN d.last_status_code END,
        last_error = CASE WHEN picked.sending_at IS NULL THEN d.last_error ELSE ${INTERRUPTED_ATTEMPT_ERROR}::text END
      FROM picked WHERE d.id = picked.id
      RETURNING d.id, d.tracking_id, d.attempts, d.event, picked.claimed_by AS cut_claim, picked.sending_at AS cut_at),
    cut AS (
      INSERT INTO delivery_attempts (id, delivery_id, attempt, started_at, duration_ms, outcome, error, worker)
      SELECT gen_random_uuid()::text, id, attempts, cut_at,
        GREATEST(0, round(extract(epoch FROM ${now}::timestamptz - cut_at) * 1000))::integer,
        'failed', ${INTERRUPTED_ATTEMPT_ERROR}::text, regexp_replace(COALESCE(cut_claim, ''), ':[^:]*$', '')
      FROM claimed WHERE cut_at IS NOT NULL)
    SELECT claimed.id AS delivery_id, claimed.attempts AS delivery_attempts, claimed.event AS delivery_event, trackings.*
    FROM claimed JOIN trackings ON trackings.id = claimed.tracking_id`.execute(db)
  return claimed.rows.map((row) => ({
    id: row.delivery_id,
    trackingId: row.id,
    attempts: Number(row.delivery_attempts),
    claim,
    tracking: rowToTracking(row),
    event: row.delivery_event,
  }))
}

/**
 * The attempts of these claimed deliveries start now: written before their requests go out, so that a
 * worker killed from here on leaves an interrupted attempt on record (claimDueDeliveries), and one
 * killed before leaves nothing spent. Only rows this worker still holds.
 */
export async function markSending(db: Db, claim: string, ids: string[], at: Date): Promise<void> {
  if (ids.length === 0) return
  await db
    .updateTable('deliveries')
    .set({ sending_at: at })
    .where('id', 'in', ids)
    .where('claimed_by', '=', claim)
    .where('state', '=', 'due')
    .execute()
}

/**
 * Takes back the start written with rows whose request waits behind their host's limit
 * (`ClaimedDelivery.startWritten`): a crash before they leave spends nothing; their start is marked again
 * when they go (`markSending`).
 */
export async function unmarkSending(db: Db, claim: string, ids: string[]): Promise<void> {
  if (ids.length === 0) return
  await db.updateTable('deliveries').set({ sending_at: null }).where('id', 'in', ids).where('claimed_by', '=', claim).execute()
}

/** Gives claimed rows back without an attempt (their host has enough in hand), due again at `at`. */
export async function postponeDeliveries(db: Db, items: { id: string; claim: string }[], at: Date): Promise<void> {
  for (const claim of new Set(items.map((item) => item.claim))) {
    await db
      .updateTable('deliveries')
      .set({ next_attempt_at: at, locked_until: null, claimed_by: null, sending_at: null })
      .where('state', '=', 'due')
      .where('claimed_by', '=', claim)
      .where(
        'id',
        'in',
        items.filter((item) => item.claim === claim).map((item) => item.id),
      )
      .execute()
  }
}

/** Renews the lease on the deliveries a worker still has in hand. */
export async function extendLeases(db: Db, claim: string, ids: string[], leaseUntil: Date): Promise<void> {
  if (ids.length === 0) return
  await db
    .updateTable('deliveries')
    .set({ locked_until: leaseUntil, next_attempt_at: leaseUntil })
    .where('id', 'in', ids)
    .where('claimed_by', '=', claim)
    .where('state', '=', 'due')
    .execute()
}

/** A tracking's deliveries, newest first, each with its attempts in order. */
export async function listDeliveries(db: Db, trackingId: string): Promise<(DeliveryRow & { attemptLog: AttemptRow[] })[]> {
  const deliveries = await db
    .selectFrom('deliveries')
    .selectAll()
    .where('tracking_id', '=', trackingId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute()
  if (deliveries.length === 0) return []
  const attempts = await db
    .selectFrom('delivery_attempts')
    .selectAll()
    .where(
      'delivery_id',
      'in',
      deliveries.map((d) => d.id),
    )
    .orderBy('started_at')
    .orderBy('attempt')
    .execute()
  return deliveries.map((delivery) => ({ ...delivery, attemptLog: attempts.filter((a) => a.delivery_id === delivery.id) }))
}

export type RedeliverOutcome =
  | { kind: 'scheduled'; delivery: DeliveryRow; created: boolean }
  | { kind: 'pending' }
  | { kind: 'no-callback' }
  | { kind: 'not-found' }

/**
 * A new delivery of a completed tracking's callback, due now. When one is still due (waiting for a
 * retry), that one is brought forward instead, so a tracking never has two deliveries racing.
 */
export async function redeliver(db: Db, trackingId: string, now: Date, requestedBy: RedeliveryRequester): Promise<RedeliverOutcome> {
  return db.transaction().execute(async (trx) => {
    const tracking = await trx
      .selectFrom('trackings')
      .select(['status', 'callback'])
      .where('id', '=', trackingId)
      .forUpdate()
      .executeTakeFirst()
    if (!tracking) return { kind: 'not-found' }
    if (tracking.status === 'pending') return { kind: 'pending' }
    if (!tracking.callback) return { kind: 'no-callback' }
    const due = await trx
      .selectFrom('deliveries')
      .selectAll()
      .where('tracking_id', '=', trackingId)
      .where('state', '=', 'due')
      .orderBy('created_at')
      .executeTakeFirst()
    if (due) {
      const inFlight = due.locked_until !== null && new Date(due.locked_until).getTime() > now.getTime()
      if (inFlight || new Date(due.next_attempt_at).getTime() <= now.getTime()) return { kind: 'scheduled', delivery: due, created: false }
      const moved = await trx
        .updateTable('deliveries')
        .set({ next_attempt_at: now, due_at: now, updated_at: now, requested_by: requestedBy })
        .where('id', '=', due.id)
        .returningAll()
        .executeTakeFirstOrThrow()
      return { kind: 'scheduled', delivery: moved, created: false }
    }
    const [created] = await insertDeliveries(trx, [{ trackingId, reason: 'redeliver', requestedBy }], now)
    return { kind: 'scheduled', delivery: created!, created: true }
  })
}

/**
 * Deliveries waiting (due, including later retries and those paused behind a disabled endpoint) and the
 * oldest overdue one's due time: also of deliveries a worker has claimed or postponed and not yet
 * attempted (their `due_at` stays); paused ones are not overdue, they wait for their endpoint.
 */
export async function deliveryQueueStats(db: Db, now: Date): Promise<{ due: number; oldestOverdue: Date | null }> {
  const row = await db
    .selectFrom('deliveries')
    .select([
      sql<string>`count(*)`.as('due'),
      sql<Date | null>`min(COALESCE(due_at, next_attempt_at)) FILTER (WHERE COALESCE(due_at, next_attempt_at) <= ${now} AND paused_at IS NULL)`.as(
        'oldest',
      ),
    ])
    .where('state', '=', 'due')
    .executeTakeFirstOrThrow()
  return { due: Number(row.due), oldestOverdue: row.oldest ? new Date(row.oldest) : null }
}
