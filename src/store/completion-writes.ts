import { sql, type OperationNodeSource } from 'kysely'
import type { FailedReason, Tracking } from '../domain/tracking.ts'
import { fenceHold, type WriteFence } from './chain-leases.ts'
import type { Db } from './infrastructure/database.ts'
import { rowToTracking, type TrackingRow } from './trackings.ts'

/** An insert or delete built but not run: run alone, or as one part of a completion's statement. */
export type WritePart = OperationNodeSource & { execute(): Promise<unknown> }

/** One tracking's change out of `pending`, as `completeTrackings` decided it. */
export interface StatusUpdate {
  id: string
  status: 'success' | 'failed'
  failedReason: FailedReason | null
  /** Null: the tracking's transaction stays as it is. */
  transaction: string | null
  /** A nonce-less tracking's paying sender and nonce (null: they stay as they are). */
  sender: string | null
  nonce: string | null
  confirmedAt: Date | null
}

/**
 * What the one-statement form (complete-at-once.ts) checks in the statement itself: every row is pending,
 * without a link and with a callback or not as read (`hasCallback` per update, in order), and `fence`
 * holds. Anything else fails the statement as a whole (SQLSTATE `COMPLETION_GUARD_FAILED`), writing nothing.
 */
export interface CompletionGuard {
  fence: WriteFence | undefined
  hasCallback: readonly boolean[]
}

/** The guard's failure (migration 0034's `paywatch_expect`). */
export const COMPLETION_GUARD_FAILED = 'PW001'

/**
 * A batch's status changes and what is written with them (success watches, delivery rows, dropped
 * matches, the block record) as one statement: the status update, with every other write a
 * data-modifying part beside it. On the embedded database each statement is a turn of its one
 * connection on the service's main thread: a block's verdicts took five of them here. The parts do not
 * read the update's output: the caller locked the rows and knows they change, or `guard` makes the
 * statement fail unless every row changes as the parts assume. Returns the updated trackings by id.
 */
export async function writeCompletions(
  trx: Db,
  updates: readonly StatusUpdate[],
  parts: readonly WritePart[],
  now: Date,
  guard?: CompletionGuard,
): Promise<Map<string, Tracking>> {
  if (updates.length === 0) {
    for (const part of parts) await part.execute()
    return new Map()
  }
  const values = sql.join(
    updates.map(
      (u, k) =>
        sql`(${u.id}::text, ${u.status}::text, ${u.failedReason}::text, ${u.transaction}::text, ${u.sender}::text, ${u.nonce}::numeric, ${u.confirmedAt}::timestamptz, ${guard?.hasCallback[k] ?? null}::boolean)`,
    ),
  )
  const beside = parts.map((part, k) => sql`, ${sql.id(`part_${k}`)} AS (${part})`)
  const fence = guard?.fence ? sql`fence AS (${fenceHold(guard.fence)}), ` : sql``
  const asRead = guard ? sql`AND t.status = 'pending' AND t.link_id IS NULL AND (t.callback IS NOT NULL) = v.has_callback` : sql``
  // The guard's row is the left side of the join, so it is evaluated even when no row was updated.
  const select = guard
    ? sql`SELECT u.* FROM (SELECT paywatch_expect((SELECT count(*) FROM updated) = ${updates.length}
        ${guard.fence ? sql`AND EXISTS (SELECT 1 FROM fence)` : sql``}) AS ok) AS g LEFT JOIN updated u ON true`
    : sql`SELECT * FROM updated`
  const { rows } = await sql<TrackingRow>`
    WITH ${fence}updated AS (
      UPDATE trackings AS t
      SET status = v.status, failed_reason = v.failed_reason, "transaction" = COALESCE(v."transaction", t."transaction"),
        sender = COALESCE(v.sender, t.sender), nonce = COALESCE(v.nonce, t.nonce), confirmed_at = v.confirmed_at, updated_at = ${now}
      FROM (VALUES ${values}) AS v(id, status, failed_reason, "transaction", sender, nonce, confirmed_at, has_callback)
      WHERE t.id = v.id ${asRead}
      RETURNING t.*
    )${sql.join(beside, sql``)}
    ${select}`.execute(trx)
  return new Map(rows.map((row) => [row.id, rowToTracking(row)]))
}
