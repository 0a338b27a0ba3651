import { sql } from 'kysely'
import type { FailedReason, Tracking } from '../domain/tracking.ts'
import { holdFence, type WriteFence } from './chain-leases.ts'
import type { Db } from './database.ts'
import { newId } from './ids.ts'
import { insertSuccessWatch } from './success-watches.ts'
import { rowToTracking } from './trackings.ts'

export type Completion =
  /** `inclusion`: the paying transaction's block, watched until it is final (see success-watches.ts). */
  | { status: 'success'; transaction: string; inclusion?: { chain: string; blockNumber: bigint; blockHash: string } }
  | { status: 'failed'; failedReason: FailedReason; transaction?: string | null }

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
  return db.transaction().execute(async (trx) => {
    if (fence) await holdFence(trx, fence)
    const current = await trx
      .selectFrom('trackings')
      .select(['status', 'link_id', 'callback'])
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst()
    if (!current || current.status !== 'pending') return undefined

    let confirmedAt: Date | null = null
    if (completion.status === 'success') {
      confirmedAt = now
      if (current.link_id) {
        // Unique per link (see the migration): a payment confirmed in the same millisecond as the
        // link's latest one is placed just after it. The link row is locked first, so completions of
        // one link (several in one block, or on several nodes) take their turn instead of reading the
        // same latest time and colliding.
        await trx.selectFrom('links').select('id').where('id', '=', current.link_id).forUpdate().execute()
        const latest = await trx
          .selectFrom('trackings')
          .select(sql<Date | null>`max(confirmed_at)`.as('at'))
          .where('link_id', '=', current.link_id)
          .executeTakeFirst()
        if (latest?.at && new Date(latest.at).getTime() >= now.getTime()) confirmedAt = new Date(new Date(latest.at).getTime() + 1)
      }
    }
    const row = await trx
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
    if (current.callback) {
      await trx
        .insertInto('deliveries')
        .values({
          id: newId(),
          tracking_id: id,
          reason: 'completed',
          next_attempt_at: now,
          due_at: now,
          created_at: now,
          updated_at: now,
        })
        .execute()
    }
    return rowToTracking(row)
  })
}
