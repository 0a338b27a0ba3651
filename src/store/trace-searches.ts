import { sql } from 'kysely'
import type { Tracking } from '../domain/tracking.ts'
import type { Db } from './infrastructure/database.ts'
import { rowToTracking, type TrackingRow } from './trackings.ts'

/**
 * The searches owed to nonce-less traces (migration 0039): the blocks from `from_block` on that the chain's
 * follower passed before the trace was stored. A row is stored with its trace (a trigger), moved on when a
 * search reads only part of its blocks, and deleted once they are all searched.
 */

/** An owed search: where it starts, and its trace while that is a pending trace (undefined: nothing left to search for). */
export interface OwedTraceSearch {
  trackingId: string
  from: bigint
  tracking: Tracking | undefined
}

/** The searches owed on `chain`, oldest first, at most `limit` of them. */
export async function findOwedTraceSearches(db: Db, chain: string, limit: number): Promise<OwedTraceSearch[]> {
  const result = await sql<TrackingRow & { search_tracking_id: string; search_from: string }>`
    SELECT s.tracking_id AS search_tracking_id, s.from_block AS search_from, t.*
    FROM trace_searches s
    LEFT JOIN trackings t ON t.id = s.tracking_id AND t.status = 'pending' AND t.nonceless AND t.transaction IS NULL
    WHERE s.blockchain = ${chain}
    ORDER BY s.created_at, s.tracking_id
    LIMIT ${limit}`.execute(db)
  return result.rows.map((row) => ({
    trackingId: row.search_tracking_id,
    from: BigInt(row.search_from),
    tracking: row.id === null ? undefined : rowToTracking(row),
  }))
}

/** Where the search owed to `trackingId` starts; undefined when none is owed. */
export async function findOwedTraceSearch(db: Db, trackingId: string): Promise<bigint | undefined> {
  const row = await db.selectFrom('trace_searches').select('from_block').where('tracking_id', '=', trackingId).executeTakeFirst()
  return row && BigInt(row.from_block)
}

/** The search owed to `trackingId` starts at `from` now (stored when none was owed). */
export async function oweTraceSearch(db: Db, trackingId: string, chain: string, from: bigint): Promise<void> {
  await db
    .insertInto('trace_searches')
    .values({ tracking_id: trackingId, blockchain: chain, from_block: from })
    .onConflict((oc) => oc.column('tracking_id').doUpdateSet({ from_block: from }))
    .execute()
}

/**
 * The search owed to `trackingId` from `from` is done: deleted, unless a later part of it was owed meanwhile
 * (its start moved on). Without `from`, whatever is owed goes (its trace is no longer pending).
 */
export async function settleTraceSearch(db: Db, trackingId: string, from?: bigint): Promise<void> {
  let query = db.deleteFrom('trace_searches').where('tracking_id', '=', trackingId)
  if (from !== undefined) query = query.where('from_block', '=', from.toString())
  await query.execute()
}
