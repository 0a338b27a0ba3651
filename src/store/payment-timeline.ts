import type { Db } from './infrastructure/database.ts'

/** Where a tracking's transaction was seen, for its timeline: the stored match or success watch. */
export interface SeenTransaction {
  transaction: string
  blockNumber: bigint
  blockHash: string
  /** When the engine stored it. */
  seenAt: Date
  /** `match`: still waiting for confirmations; `watch`: a success whose block is not final yet. */
  source: 'match' | 'watch'
}

/** The tracking's stored match or success watch (one index probe each, by primary key). */
export async function findSeenTransaction(db: Db, trackingId: string): Promise<SeenTransaction | undefined> {
  const match = await db
    .selectFrom('tracking_matches')
    .select(['transaction', 'block_number', 'block_hash', 'created_at'])
    .where('tracking_id', '=', trackingId)
    .executeTakeFirst()
  const row =
    match ??
    (await db
      .selectFrom('success_watches')
      .select(['transaction', 'block_number', 'block_hash', 'created_at'])
      .where('tracking_id', '=', trackingId)
      .executeTakeFirst())
  if (!row) return undefined
  return {
    transaction: row.transaction,
    blockNumber: BigInt(row.block_number),
    blockHash: row.block_hash,
    seenAt: row.created_at,
    source: match ? 'match' : 'watch',
  }
}

/** A tracking's status and chain by id (the live payment page's look for changes made on other nodes). */
export async function findTrackingState(db: Db, trackingId: string): Promise<{ status: string; blockchain: string } | undefined> {
  return db.selectFrom('trackings').select(['status', 'blockchain']).where('id', '=', trackingId).executeTakeFirst()
}
