import { sql } from 'kysely'
import type { Tracking } from '../domain/tracking.ts'
import type { WritePart } from './completion-writes.ts'
import type { AttemptRow, ClaimedDelivery } from './deliveries.ts'
import type { Db } from './infrastructure/database.ts'
import { newId } from './ids.ts'
import { releaseStatement } from './release-tracking.ts'
import { releaseTrackings } from './release-trackings.ts'

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
  /** The endpoint answered 410 Gone: it is disabled (docs/api.md §8). */
  gone?: boolean
}

/**
 * Writes a batch of attempts in a fixed number of statements, whatever the batch size: the log rows;
 * each delivery's new state, only while this worker still holds it (a worker whose lease was taken over
 * cannot overwrite the outcome); for a 200 the release of the waiting user (`releaseStatement`, the rule of
 * `releaseTracking`: completed trackings not yet released, `forward_to` replaced when the answer carried
 * one); for a 202 (or a 200 to a tracking released before) the answer's `forward_to`. `alsoWrite` (the
 * endpoints' health) goes with them.
 * The usual batch, whose answers carried no `forward_to`, is one statement without a transaction (on the
 * embedded database each statement is a turn of the main thread); one with a `forward_to` is a transaction.
 * Returns the trackings released here, for the `released` event.
 */
export async function recordAttempts(
  db: Db,
  outcomes: AttemptOutcome[],
  now: Date,
  alsoWrite?: (db: Db) => WritePart,
): Promise<Tracking[]> {
  if (outcomes.length === 0) return []
  if (outcomes.every((o) => o.forwardTo === null)) return recordAtOnce(db, outcomes, now, alsoWrite)
  const released = await db.transaction().execute(async (trx) => {
    await attemptLogInsert(trx, outcomes).execute()
    const updated = await sql<{ id: string }>`${deliveryStatesUpdate(outcomes, now)}`.execute(trx)
    // Outcomes of deliveries this worker no longer held are logged above but change nothing.
    const applied = new Set(updated.rows.map((row) => row.id))
    const payment = paymentOutcomes(outcomes.filter((o) => applied.has(o.delivery.id)))
    const toRelease = payment.filter((o) => o.next.state === 'delivered')
    const releasedNow = await releaseTrackings(
      trx,
      toRelease.map((o) => ({ id: o.delivery.trackingId, forwardTo: o.forwardTo })),
      now,
    )
    const released = asReleased(toRelease, releasedNow, now)
    const releasedIds = new Set(released.map((t) => t.id))
    const forwards = payment.filter(
      (o) =>
        o.forwardTo !== null && (o.next.state === 'accepted' || (o.next.state === 'delivered' && !releasedIds.has(o.delivery.trackingId))),
    )
    if (forwards.length > 0) {
      const values = forwards.map((o) => sql`(${o.delivery.trackingId}::text, ${o.forwardTo}::text)`)
      await sql`
        UPDATE trackings AS t SET forward_to = v.forward_to, updated_at = ${now}
        FROM (VALUES ${sql.join(values)}) AS v(id, forward_to)
        WHERE t.id = v.id AND t.forward_to IS DISTINCT FROM v.forward_to`.execute(trx)
    }
    return released
  })
  if (alsoWrite) await alsoWrite(db).execute()
  return released
}

/**
 * The batch without a `forward_to` as one statement: the log rows, the deliveries' states and the
 * releases as parts of one `WITH`; a release applies only to a delivery whose state this worker wrote
 * (the `applied` part), as in the transaction's form.
 */
async function recordAtOnce(
  db: Db,
  outcomes: AttemptOutcome[],
  now: Date,
  alsoWrite: ((db: Db) => WritePart) | undefined,
): Promise<Tracking[]> {
  const toRelease = paymentOutcomes(outcomes).filter((o) => o.next.state === 'delivered')
  const release =
    toRelease.length > 0
      ? sql`, released AS (${releaseStatement(
          toRelease.map((o) => ({ id: o.delivery.trackingId, forwardTo: null, deliveryId: o.delivery.id })),
          now,
          sql`t.id, t.forward_to`,
          sql`SELECT id FROM applied`,
        )})`
      : sql``
  const also = alsoWrite ? sql`, also AS (${alsoWrite(db)})` : sql``
  const { rows } = await sql<{ id: string; forward_to: string | null }>`
    WITH logged AS (${attemptLogInsert(db, outcomes)}),
    applied AS (${deliveryStatesUpdate(outcomes, now)})${release}${also}
    ${toRelease.length > 0 ? sql`SELECT id, forward_to FROM released` : sql`SELECT NULL::text AS id, NULL::text AS forward_to WHERE false`}`.execute(
    db,
  )
  return asReleased(
    toRelease,
    rows.map((row) => ({ id: row.id, forwardTo: row.forward_to })),
    now,
  )
}

const attemptLogInsert = (db: Db, outcomes: AttemptOutcome[]) =>
  db.insertInto('delivery_attempts').values(
    outcomes.map((o) => ({
      id: newId(),
      delivery_id: o.delivery.id,
      attempt: o.delivery.attempts + 1,
      started_at: o.startedAt,
      duration_ms: o.durationMs,
      outcome: o.outcome,
      status_code: o.statusCode,
      error: o.error,
      response_excerpt: o.excerpt,
      worker: o.worker,
    })),
  )

/** Each delivery's new state, only where this worker still holds it; answers the ids it wrote. */
function deliveryStatesUpdate(outcomes: AttemptOutcome[], now: Date) {
  const rows = outcomes.map(
    (o) => sql`(${o.delivery.id}::text, ${o.delivery.claim}::text, ${o.next.state}::text,
      ${o.next.state === 'due' ? o.next.at : null}::timestamptz, ${o.startedAt}::timestamptz, ${o.statusCode}::integer, ${o.error}::text)`,
  )
  return sql`
    UPDATE deliveries AS d SET
      state = v.state, attempts = d.attempts + 1, next_attempt_at = COALESCE(v.next_at, d.next_attempt_at), due_at = COALESCE(v.next_at, d.due_at),
      finished_at = CASE WHEN v.state = 'due' THEN NULL ELSE ${now}::timestamptz END,
      locked_until = NULL, claimed_by = NULL, sending_at = NULL, updated_at = ${now},
      last_attempt_at = v.started_at, last_status_code = v.status_code, last_error = v.error
    FROM (VALUES ${sql.join(rows)}) AS v(id, claim, state, next_at, started_at, status_code, error)
    WHERE d.id = v.id AND d.claimed_by = v.claim AND d.state = 'due'
    RETURNING d.id`
}

/** An event's answer (docs/api.md §8) neither releases the user nor changes `forward_to`: only the payment callback's does. */
const paymentOutcomes = (outcomes: AttemptOutcome[]) => outcomes.filter((o) => !o.delivery.event)

/**
 * A completed tracking changes no other column after its claim (status, transaction and the rest are
 * final), so the claimed copy with these three values is the row as written, without reading 30 columns back.
 */
function asReleased(toRelease: AttemptOutcome[], releasedNow: { id: string; forwardTo: string | null }[], now: Date): Tracking[] {
  const claimed = new Map(toRelease.map((o) => [o.delivery.trackingId, o.delivery.tracking]))
  return releasedNow.map(
    (row): Tracking => ({ ...claimed.get(row.id)!, release: true, releasedAt: now, updatedAt: now, forwardTo: row.forwardTo }),
  )
}
