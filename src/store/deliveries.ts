import { sql, type Selectable } from 'kysely'
import type { Tracking } from '../domain/tracking.ts'
import type { Db } from './database.ts'
import { newId } from './ids.ts'
import { releaseTracking } from './release-tracking.ts'
import type { DeliveriesTable, DeliveryAttemptsTable } from './schema.ts'
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
}

/**
 * Claims up to `limit` due deliveries for one worker until `leaseUntil`. SKIP LOCKED lets any number
 * of workers on any number of nodes claim at once without waiting on, or taking, each other's rows;
 * a row whose lease expired (its worker died) is due again.
 */
export async function claimDueDeliveries(
  db: Db,
  options: { now: Date; leaseUntil: Date; limit: number; claim: string },
): Promise<ClaimedDelivery[]> {
  const { now, leaseUntil, limit, claim } = options
  const claimed = await sql<{ id: string; tracking_id: string; attempts: number }>`
    UPDATE deliveries SET locked_until = ${leaseUntil}, claimed_by = ${claim}
    WHERE id IN (
      SELECT id FROM deliveries
      WHERE state = 'due' AND next_attempt_at <= ${now} AND (locked_until IS NULL OR locked_until <= ${now})
      ORDER BY next_attempt_at
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED)
    RETURNING id, tracking_id, attempts`.execute(db)
  if (claimed.rows.length === 0) return []
  const trackings = await db.selectFrom('trackings').selectAll()
    .where('id', 'in', [...new Set(claimed.rows.map((row) => row.tracking_id))]).execute()
  const byId = new Map(trackings.map((row: TrackingRow) => [row.id, rowToTracking(row)]))
  return claimed.rows.flatMap((row) => {
    const tracking = byId.get(row.tracking_id)
    return tracking ? [{ id: row.id, trackingId: row.tracking_id, attempts: Number(row.attempts), claim, tracking }] : []
  })
}

/** Gives claimed rows back without an attempt (their host is busy), due again at `at`. */
export async function postponeDeliveries(db: Db, items: { id: string; claim: string }[], at: Date): Promise<void> {
  if (items.length === 0) return
  await db.updateTable('deliveries')
    .set({ next_attempt_at: at, locked_until: null, claimed_by: null })
    .where('state', '=', 'due')
    .where((eb) => eb.or(items.map((item) => eb.and([eb('id', '=', item.id), eb('claimed_by', '=', item.claim)]))))
    .execute()
}

/** The outcome of one attempt, and what happens to the delivery after it. */
export interface AttemptOutcome {
  delivery: ClaimedDelivery
  worker: string
  startedAt: Date
  durationMs: number
  outcome: AttemptRow['outcome']
  statusCode: number | null
  error: string | null
  excerpt: string | null
  /** The answer's `forward_to` (200 or 202). */
  forwardTo: string | null
  /** `due` with the retry time, or the final state. */
  next: { state: 'due'; at: Date } | { state: 'delivered' | 'accepted' | 'dead' }
}

/**
 * Writes attempts in one transaction: the log row, the delivery's new state (only while this worker
 * still holds it), and for a 200 the release of the waiting user (with `forward_to`). Returns the
 * trackings released here, for the `released` event.
 */
export async function recordAttempts(db: Db, outcomes: AttemptOutcome[], now: Date): Promise<Tracking[]> {
  if (outcomes.length === 0) return []
  return db.transaction().execute(async (trx) => {
    await trx.insertInto('delivery_attempts').values(outcomes.map((o) => ({
      id: newId(), delivery_id: o.delivery.id, attempt: o.delivery.attempts + 1, started_at: o.startedAt,
      duration_ms: o.durationMs, outcome: o.outcome, status_code: o.statusCode, error: o.error,
      response_excerpt: o.excerpt, worker: o.worker,
    }))).execute()
    const released: Tracking[] = []
    for (const o of outcomes) {
      const updated = await trx.updateTable('deliveries')
        .set({
          state: o.next.state,
          attempts: sql`attempts + 1`,
          next_attempt_at: o.next.state === 'due' ? o.next.at : sql`next_attempt_at`,
          finished_at: o.next.state === 'due' ? null : now,
          locked_until: null, claimed_by: null, updated_at: now,
          last_attempt_at: o.startedAt, last_status_code: o.statusCode, last_error: o.error,
        })
        .where('id', '=', o.delivery.id).where('claimed_by', '=', o.delivery.claim).where('state', '=', 'due')
        .returning('id')
        .executeTakeFirst()
      if (!updated) continue // the lease was lost: the worker that took over decides
      const trackingId = o.delivery.trackingId
      if (o.next.state === 'delivered') {
        const result = await releaseTracking(trx, trackingId, now, o.forwardTo !== null ? { forwardTo: o.forwardTo } : {})
        if (result?.changed) released.push(result.tracking)
        else if (result && o.forwardTo !== null) await setForwardTo(trx, trackingId, o.forwardTo, now)
      } else if (o.next.state === 'accepted' && o.forwardTo !== null) {
        await setForwardTo(trx, trackingId, o.forwardTo, now)
      }
    }
    return released
  })
}

async function setForwardTo(db: Db, trackingId: string, forwardTo: string, now: Date): Promise<void> {
  await db.updateTable('trackings').set({ forward_to: forwardTo, updated_at: now })
    .where('id', '=', trackingId).where((eb) => eb('forward_to', 'is distinct from', forwardTo)).execute()
}

/** A tracking's deliveries, newest first, each with its attempts in order. */
export async function listDeliveries(db: Db, trackingId: string): Promise<(DeliveryRow & { attemptLog: AttemptRow[] })[]> {
  const deliveries = await db.selectFrom('deliveries').selectAll()
    .where('tracking_id', '=', trackingId).orderBy('created_at', 'desc').orderBy('id').execute()
  if (deliveries.length === 0) return []
  const attempts = await db.selectFrom('delivery_attempts').selectAll()
    .where('delivery_id', 'in', deliveries.map((d) => d.id)).orderBy('started_at').orderBy('attempt').execute()
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
export async function redeliver(db: Db, trackingId: string, now: Date): Promise<RedeliverOutcome> {
  return db.transaction().execute(async (trx) => {
    const tracking = await trx.selectFrom('trackings').select(['status', 'callback'])
      .where('id', '=', trackingId).forUpdate().executeTakeFirst()
    if (!tracking) return { kind: 'not-found' }
    if (tracking.status === 'pending') return { kind: 'pending' }
    if (!tracking.callback) return { kind: 'no-callback' }
    const due = await trx.selectFrom('deliveries').selectAll()
      .where('tracking_id', '=', trackingId).where('state', '=', 'due').orderBy('created_at').executeTakeFirst()
    if (due) {
      const inFlight = due.locked_until !== null && new Date(due.locked_until).getTime() > now.getTime()
      if (inFlight || new Date(due.next_attempt_at).getTime() <= now.getTime()) return { kind: 'scheduled', delivery: due, created: false }
      const moved = await trx.updateTable('deliveries').set({ next_attempt_at: now, updated_at: now })
        .where('id', '=', due.id).returningAll().executeTakeFirstOrThrow()
      return { kind: 'scheduled', delivery: moved, created: false }
    }
    const created = await trx.insertInto('deliveries')
      .values({ id: newId(), tracking_id: trackingId, reason: 'redeliver', next_attempt_at: now, created_at: now, updated_at: now })
      .returningAll().executeTakeFirstOrThrow()
    return { kind: 'scheduled', delivery: created, created: true }
  })
}

/** Deliveries waiting (due, including later retries) and the oldest overdue one's due time. */
export async function deliveryQueueStats(db: Db, now: Date): Promise<{ due: number; oldestOverdue: Date | null }> {
  const row = await db.selectFrom('deliveries')
    .select([
      sql<string>`count(*)`.as('due'),
      sql<Date | null>`min(next_attempt_at) FILTER (WHERE next_attempt_at <= ${now})`.as('oldest'),
    ])
    .where('state', '=', 'due')
    .executeTakeFirstOrThrow()
  return { due: Number(row.due), oldestOverdue: row.oldest ? new Date(row.oldest) : null }
}
