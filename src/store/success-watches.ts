import type { Tracking } from '../domain/tracking.ts'
import { fenced, type WriteFence } from './chain-leases.ts'
import type { Db } from './database.ts'
import { rowToTracking } from './trackings.ts'

/** Where a successful tracking's paying transaction is, watched until that block is final. */
export interface SuccessWatch {
  trackingId: string
  chain: string
  blockNumber: bigint
  blockHash: string
  transaction: string
}

/** Written in the transaction that completes the tracking (see completeTracking). */
export async function insertSuccessWatch(db: Db, watch: SuccessWatch, now: Date): Promise<void> {
  await db
    .insertInto('success_watches')
    .values({
      tracking_id: watch.trackingId,
      chain: watch.chain,
      block_number: watch.blockNumber,
      block_hash: watch.blockHash.toLowerCase(),
      transaction: watch.transaction.toLowerCase(),
      created_at: now,
    })
    .onConflict((oc) => oc.column('tracking_id').doNothing())
    .execute()
}

const toWatch = (row: {
  tracking_id: string
  chain: string
  block_number: string
  block_hash: string
  transaction: string
}): SuccessWatch => ({
  trackingId: row.tracking_id,
  chain: row.chain,
  blockNumber: BigInt(row.block_number),
  blockHash: row.block_hash,
  transaction: row.transaction,
})

/**
 * The watched successes of `chain`: one index probe per block. Rows are deleted once their block is
 * final, so this reads at most the successes of the chain's finality window.
 */
export async function findSuccessWatches(db: Db, chain: string): Promise<SuccessWatch[]> {
  const rows = await db
    .selectFrom('success_watches')
    .select(['tracking_id', 'chain', 'block_number', 'block_hash', 'transaction'])
    .where('chain', '=', chain)
    .execute()
  return rows.map(toWatch)
}

/** Ends the watch of these successes (their block is final, or it left the chain). */
export async function deleteSuccessWatches(db: Db, trackingIds: string[], fence?: WriteFence): Promise<void> {
  if (trackingIds.length === 0) return
  await fenced(db, fence, (db) => db.deleteFrom('success_watches').where('tracking_id', 'in', trackingIds).execute())
}

/**
 * Takes the watches of `trackingIds` (or, with `above`, of every block of `chain` above that
 * number: a reorg replaced them), with their trackings. Deleting and returning in one statement
 * makes each revert announced once, even when two paths notice it.
 */
export async function takeSuccessWatches(
  db: Db,
  chain: string,
  which: { above: bigint } | { trackingIds: string[] },
  fence?: WriteFence,
): Promise<{ watch: SuccessWatch; tracking: Tracking }[]> {
  if ('trackingIds' in which && which.trackingIds.length === 0) return []
  const rows = await fenced(db, fence, (db) => {
    const query = db.deleteFrom('success_watches').where('chain', '=', chain)
    return (
      'above' in which ? query.where('block_number', '>', which.above.toString()) : query.where('tracking_id', 'in', which.trackingIds)
    )
      .returning(['tracking_id', 'chain', 'block_number', 'block_hash', 'transaction'])
      .execute()
  })
  if (rows.length === 0) return []
  const trackings = await db
    .selectFrom('trackings')
    .selectAll()
    .where(
      'id',
      'in',
      rows.map((row) => row.tracking_id),
    )
    .execute()
  const byId = new Map(trackings.map((row) => [row.id, rowToTracking(row)]))
  return rows.flatMap((row) => {
    const tracking = byId.get(row.tracking_id)
    return tracking ? [{ watch: toWatch(row), tracking }] : []
  })
}
