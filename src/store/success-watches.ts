import { sql } from 'kysely'
import type { Tracking } from '../domain/tracking.ts'
import { fenced, type WriteFence } from './chain-leases.ts'
import type { Db } from './infrastructure/database.ts'
import { recordReversalEvents, type ReversalEvent } from './reversal-deliveries.ts'

/** Where a successful tracking's paying transaction is, watched until that block is final. */
export interface SuccessWatch {
  trackingId: string
  chain: string
  blockNumber: bigint
  blockHash: string
  transaction: string
  /** Set when the transaction left the chain: watched on for it to be mined again (docs/api.md §8). */
  revertedAt?: Date
  /** The tracking's confirmations (on reverted watches: the commitment to reach again). */
  confirmations?: number
}

/** Written in the transaction that completes the tracking (see completeTracking). */
export async function insertSuccessWatch(db: Db, watch: SuccessWatch, now: Date): Promise<void> {
  await insertSuccessWatches(db, [watch], now)
}

/** Several watches in one statement (a block's successes). */
export async function insertSuccessWatches(db: Db, watches: readonly SuccessWatch[], now: Date): Promise<void> {
  if (watches.length === 0) return
  await successWatchesInsert(db, watches, now).execute()
}

/** The insert of `insertSuccessWatches`, unexecuted (a part of a completion's one statement, completion-writes.ts). */
export function successWatchesInsert(db: Db, watches: readonly SuccessWatch[], now: Date) {
  return db
    .insertInto('success_watches')
    .values(
      watches.map((watch) => ({
        tracking_id: watch.trackingId,
        chain: watch.chain,
        block_number: watch.blockNumber,
        block_hash: watch.blockHash.toLowerCase(),
        transaction: watch.transaction.toLowerCase(),
        created_at: now,
      })),
    )
    .onConflict((oc) => oc.column('tracking_id').doNothing())
}

interface WatchRow {
  tracking_id: string
  chain: string
  block_number: string
  block_hash: string
  transaction: string
}

const toWatch = (row: WatchRow): SuccessWatch => ({
  trackingId: row.tracking_id,
  chain: row.chain,
  blockNumber: BigInt(row.block_number),
  blockHash: row.block_hash,
  transaction: row.transaction,
})

/** The watched successes of `chain` whose transaction is still where they were found (diagnostics, tests). */
export async function findSuccessWatches(db: Db, chain: string): Promise<SuccessWatch[]> {
  const rows = await db.selectFrom('success_watches').selectAll().where('chain', '=', chain).where('reverted_at', 'is', null).execute()
  return rows.map(toWatch)
}

/**
 * The watched successes of `chain` that a block's check acts on, also those whose transaction left the
 * chain (with `revertedAt`): the reverted ones, those whose block is final at `finalized`, and those whose
 * height `canonical` holds with another block. A watch on a canonical block that is not final yet needs
 * nothing and is not read, so the read costs what changed, not the finality window's successes (~10 a
 * paying block over Ethereum's 64). `canonical`: the blocks the follower holds, one per height.
 */
export async function findWatchesToCheck(
  db: Db,
  chain: string,
  finalized: bigint,
  canonical: readonly { number: bigint; hash: string }[],
): Promise<SuccessWatch[]> {
  const numbers = canonical.map((block) => block.number.toString())
  const hashes = canonical.map((block) => block.hash)
  const { rows } = await sql<WatchRow & { reverted_at: Date | string | null; confirmations: number }>`
    SELECT w.tracking_id, w.chain, w.block_number, w.block_hash, w."transaction", w.reverted_at,
      -- In the select list: read for the rows answered alone, not for every watch before the filter.
      (SELECT t.confirmations FROM trackings t WHERE t.id = w.tracking_id) AS confirmations
    FROM success_watches w
    LEFT JOIN unnest(${numbers}::bigint[], ${hashes}::text[]) AS c(number, hash) ON c.number = w.block_number
    WHERE w.chain = ${chain} AND (w.reverted_at IS NOT NULL OR w.block_number <= ${finalized.toString()}::bigint OR c.hash <> w.block_hash)`.execute(
    db,
  )
  return rows.map((row) => ({
    ...toWatch(row),
    confirmations: row.confirmations,
    ...(row.reverted_at ? { revertedAt: new Date(row.reverted_at) } : {}),
  }))
}

/** Runs `work` in one transaction, under the fence when one is given. */
const inTransaction = <T>(db: Db, fence: WriteFence | undefined, work: (db: Db) => Promise<T>): Promise<T> =>
  fence ? fenced(db, fence, work) : db.transaction().execute(work)

/**
 * A reverted success's transaction is in a canonical block again and has reached its commitment: the
 * watch goes on from that block, and `payment.reconfirmed` is recorded in the same transaction.
 * Answers the event (null when another path reconfirmed it first).
 */
export async function reconfirmSuccessWatch(
  db: Db,
  trackingId: string,
  block: { number: bigint; hash: string },
  now: Date,
  fence?: WriteFence,
): Promise<ReversalEvent | null> {
  return inTransaction(db, fence, async (trx) => {
    const row = await trx
      .updateTable('success_watches')
      .set({ reverted_at: null, block_number: block.number.toString(), block_hash: block.hash.toLowerCase() })
      .where('tracking_id', '=', trackingId)
      .where('reverted_at', 'is not', null)
      .returning('tracking_id')
      .executeTakeFirst()
    if (!row) return null
    return (await recordReversalEvents(trx, [trackingId], 'payment.reconfirmed', now))[0] ?? null
  })
}

/** Ends the watch of reverted successes not mined again since `before`. */
export async function dropRevertedWatches(db: Db, chain: string, before: Date, fence?: WriteFence): Promise<void> {
  await fenced(db, fence, (db) => db.deleteFrom('success_watches').where('chain', '=', chain).where('reverted_at', '<', before).execute())
}

/** Ends the watch of these successes (their block is final, or it left the chain). */
export async function deleteSuccessWatches(db: Db, trackingIds: string[], fence?: WriteFence): Promise<void> {
  if (trackingIds.length === 0) return
  await fenced(db, fence, (db) => db.deleteFrom('success_watches').where('tracking_id', 'in', trackingIds).execute())
}

/**
 * Marks the watches of `trackingIds` (or, with `above`, of every block of `chain` above that number: a
 * reorg replaced them) reverted, and records `payment.reverted` for their trackings, in one transaction.
 * Only watches not reverted yet are taken, so each revert is announced once, even when two paths notice
 * it. The watch goes on: the transaction may be mined again.
 */
export async function takeSuccessWatches(
  db: Db,
  chain: string,
  which: { above: bigint } | { trackingIds: string[] },
  fence?: WriteFence,
  now: Date = new Date(),
): Promise<{ watch: SuccessWatch; tracking: Tracking; sent: boolean }[]> {
  if ('trackingIds' in which && which.trackingIds.length === 0) return []
  return inTransaction(db, fence, async (trx) => {
    const query = trx.updateTable('success_watches').set({ reverted_at: now }).where('chain', '=', chain).where('reverted_at', 'is', null)
    const rows = await ('above' in which
      ? query.where('block_number', '>', which.above.toString())
      : query.where('tracking_id', 'in', which.trackingIds)
    )
      .returning(['tracking_id', 'chain', 'block_number', 'block_hash', 'transaction'])
      .execute()
    if (rows.length === 0) return []
    const events = await recordReversalEvents(
      trx,
      rows.map((row) => row.tracking_id),
      'payment.reverted',
      now,
    )
    const byId = new Map(events.map((event) => [event.tracking.id, event]))
    return rows.flatMap((row) => {
      const event = byId.get(row.tracking_id)
      return event ? [{ watch: toWatch(row), tracking: event.tracking, sent: event.sent }] : []
    })
  })
}
