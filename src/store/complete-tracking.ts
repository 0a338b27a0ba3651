import { sql } from 'kysely'
import type { FailedReason, Tracking } from '../domain/tracking.ts'
import { holdFence, type WriteFence } from './chain-leases.ts'
import type { Db } from './database.ts'
import { insertDeliveries } from './delivery-rows.ts'
import { insertSuccessWatch } from './success-watches.ts'
import { rowToTracking } from './trackings.ts'

export type Completion =
  /** `inclusion`: the paying transaction's block, watched until it is final (see success-watches.ts). */
  | { status: 'success'; transaction: string; inclusion?: { chain: string; blockNumber: bigint; blockHash: string } }
  | { status: 'failed'; failedReason: FailedReason; transaction?: string | null }

/** One tracking to complete; `dropMatch`: its stored match goes in the same transaction. */
export interface CompletionRequest {
  id: string
  completion: Completion
  dropMatch?: boolean
}

/**
 * The one way a tracking leaves `pending`: the status change, its callback delivery row and the
 * watch of a success's block are written in one transaction, and only a pending tracking changes
 * (final states are final). Returns the completed tracking, or undefined when it was no longer pending.
 * With `fence` (the chain follower's verdicts) nothing is written unless this node still holds the
 * chain's lease.
 */
export async function completeTracking(
  db: Db,
  id: string,
  completion: Completion,
  now: Date,
  fence?: WriteFence,
): Promise<Tracking | undefined> {
  return (await completeTrackings(db, [{ id, completion }], now, fence))[0]
}

/**
 * Completes several trackings in one transaction (a block's verdicts): one lease check, one lock
 * read and one delivery insert for all of them, which on the embedded database (one connection,
 * every transaction in turn) is most of a paying block's time. Results in the order of `requests`.
 * Rows are locked in id order, then their links in id order, as every completion does, so two
 * batches never wait on each other in a circle.
 */
export async function completeTrackings(
  db: Db,
  requests: readonly CompletionRequest[],
  now: Date,
  fence?: WriteFence,
): Promise<(Tracking | undefined)[]> {
  if (requests.length === 0) return []
  return db.transaction().execute(async (trx) => {
    if (fence) await holdFence(trx, fence)
    const ids = [...new Set(requests.map((r) => r.id))].sort()
    const rows = await trx
      .selectFrom('trackings')
      .select(['id', 'status', 'link_id', 'callback'])
      .where('id', 'in', ids)
      .orderBy('id')
      .forUpdate()
      .execute()
    const current = new Map(rows.map((row) => [row.id, row]))
    const linkIds = [
      ...new Set(
        requests.filter((r) => r.completion.status === 'success' && current.get(r.id)?.link_id).map((r) => current.get(r.id)!.link_id!),
      ),
    ].sort()
    // Unique per link (see the migration): a payment confirmed in the same millisecond as the
    // link's latest one is placed just after it. The link rows are locked first, so completions of
    // one link (in one block, or on several nodes) take their turn instead of reading the same
    // latest time and colliding.
    if (linkIds.length > 0) await trx.selectFrom('links').select('id').where('id', 'in', linkIds).orderBy('id').forUpdate().execute()
    const latestOfLink = new Map<string, number>()
    const results: (Tracking | undefined)[] = []
    const completed = new Set<string>()
    for (const { id, completion } of requests) {
      const row = current.get(id)
      if (!row || row.status !== 'pending' || completed.has(id)) {
        results.push(undefined)
        continue
      }
      completed.add(id)
      const confirmedAt = completion.status === 'success' ? await confirmedTime(trx, row.link_id, now, latestOfLink) : null
      const updated = await trx
        .updateTable('trackings')
        .set({
          status: completion.status,
          failed_reason: completion.status === 'failed' ? completion.failedReason : null,
          ...(completion.transaction ? { transaction: completion.transaction } : {}),
          confirmed_at: confirmedAt,
          updated_at: now,
        })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow()
      if (completion.status === 'success' && completion.inclusion) {
        await insertSuccessWatch(trx, { trackingId: id, transaction: completion.transaction, ...completion.inclusion }, now)
      }
      results.push(rowToTracking(updated))
    }
    const withCallback = [...completed].filter((id) => current.get(id)!.callback)
    await insertDeliveries(
      trx,
      withCallback.map((trackingId) => ({ trackingId, reason: 'completed' })),
      now,
    )
    const dropped = requests.filter((r) => r.dropMatch).map((r) => r.id)
    if (dropped.length > 0) await trx.deleteFrom('tracking_matches').where('tracking_id', 'in', dropped).execute()
    return results
  })
}

/** A success's confirmation time: now, or just after its link's latest one (kept per link within the batch). */
async function confirmedTime(trx: Db, linkId: string | null, now: Date, latestOfLink: Map<string, number>): Promise<Date> {
  if (!linkId) return now
  let latest = latestOfLink.get(linkId)
  if (latest === undefined) {
    const row = await trx
      .selectFrom('trackings')
      .select(sql<Date | null>`max(confirmed_at)`.as('at'))
      .where('link_id', '=', linkId)
      .executeTakeFirst()
    latest = row?.at ? new Date(row.at).getTime() : Number.NEGATIVE_INFINITY
  }
  const at = latest >= now.getTime() ? latest + 1 : now.getTime()
  latestOfLink.set(linkId, at)
  return new Date(at)
}
