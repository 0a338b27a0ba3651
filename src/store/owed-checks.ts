import { sql } from 'kysely'
import type { Tracking } from '../domain/tracking.ts'
import type { Db } from './infrastructure/database.ts'
import { rowToTracking, type TrackingRow } from './trackings.ts'

/**
 * The checks owed to new trackings (migration 0039): a row is stored with its tracking (a trigger), deleted
 * once the tracking's check is done. For a trace, the check is a search of the blocks from `from_block` on
 * that the chain's follower passed before the trace was stored; one that reads only part of them moves the
 * row's start on.
 */

/** An owed check: where a trace's search starts, and its tracking while pending (undefined: nothing left to check). */
export interface OwedCheck {
  trackingId: string
  from: bigint
  tracking: Tracking | undefined
}

/**
 * The checks owed on `chain`, oldest first, at most `limit`: every trace's (only the chain's follower can
 * search for it), and the others' once `minAgeMs` old (until then, the node that stored them is checking).
 */
export async function findOwedChecks(db: Db, chain: string, limit: number, minAgeMs: number): Promise<OwedCheck[]> {
  const result = await sql<TrackingRow & { owed_tracking_id: string; owed_from: string }>`
    WITH owed AS (
      (SELECT tracking_id, from_block, created_at FROM owed_checks
        WHERE blockchain = ${chain} AND created_at < now() - make_interval(secs => ${minAgeMs / 1000})
        ORDER BY created_at LIMIT ${limit})
      UNION
      (SELECT tracking_id, from_block, created_at FROM owed_checks
        WHERE blockchain = ${chain} AND trace
        ORDER BY created_at LIMIT ${limit})
    )
    SELECT o.tracking_id AS owed_tracking_id, o.from_block AS owed_from, t.*
    FROM owed o
    LEFT JOIN trackings t ON t.id = o.tracking_id AND t.status = 'pending'
    ORDER BY o.created_at, o.tracking_id
    LIMIT ${limit}`.execute(db)
  return result.rows.map((row) => ({
    trackingId: row.owed_tracking_id,
    from: BigInt(row.owed_from),
    tracking: row.id === null ? undefined : rowToTracking(row),
  }))
}

/** Where the search owed to the trace `trackingId` starts; undefined when none is owed. */
export async function findOwedSearchStart(db: Db, trackingId: string): Promise<bigint | undefined> {
  const row = await db.selectFrom('owed_checks').select('from_block').where('tracking_id', '=', trackingId).executeTakeFirst()
  return row && BigInt(row.from_block)
}

/** The search owed to the trace `trackingId` starts at `from` now (owed anew when it was not). */
export async function oweSearchFrom(db: Db, trackingId: string, chain: string, from: bigint): Promise<void> {
  await db
    .insertInto('owed_checks')
    .values({ tracking_id: trackingId, blockchain: chain, from_block: from, trace: true })
    .onConflict((oc) => oc.column('tracking_id').doUpdateSet({ from_block: from }))
    .execute()
}

/**
 * The trace's search from `from` is done: its row goes, unless a later part of the search was owed meanwhile
 * (its start moved on) or the trace was given its transaction (a check by it is owed now).
 */
export async function settleOwedSearch(db: Db, trackingId: string, from: bigint): Promise<void> {
  await db
    .deleteFrom('owed_checks')
    .where('tracking_id', '=', trackingId)
    .where('from_block', '=', from.toString())
    .where('trace', '=', true)
    .execute()
}

/** The checks of `trackingIds` are done (or given up). */
export async function settleOwedChecks(db: Db, trackingIds: readonly string[]): Promise<void> {
  if (trackingIds.length === 0) return
  await sql`DELETE FROM owed_checks WHERE tracking_id = ANY(${[...trackingIds]}::text[])`.execute(db)
}
