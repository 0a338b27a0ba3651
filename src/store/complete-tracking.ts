import { sql } from 'kysely'
import type { Tracking } from '../domain/tracking.ts'
import { fenceHold, holdFence, LeadershipLostError, type WriteFence } from './chain-leases.ts'
import { writeCompletions, type StatusUpdate } from './completion-writes.ts'
import type { Db } from './infrastructure/database.ts'
import type { SuccessWatch } from './success-watches.ts'
import { completeAtOnce } from './complete-at-once.ts'
import { completionParts, inRequestOrder, statusUpdateOf, watchOf } from './completion-parts.ts'

import type { Completed, Completion, CompletionOptions, CompletionRequest } from './completion-types.ts'

export type { Completed, Completion, CompletionOptions, CompletionRequest }

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
  return (await completeTrackings(db, [{ id, completion }], now, { fence }))[0]?.tracking
}

/**
 * Completes several trackings in one transaction (a block's verdicts): one statement checks the lease
 * and locks the rows, one writes everything (completion-writes.ts); on the embedded database (one
 * connection, every statement a turn of the main thread) these are most of a paying block's time. A
 * batch read as it is written (complete-at-once.ts) takes one statement and no transaction. Results
 * in the order of `requests`.
 * Rows are locked in id order, then their links in id order, as every completion does, so two
 * batches never wait on each other in a circle.
 */
export async function completeTrackings(
  db: Db,
  requests: readonly CompletionRequest[],
  now: Date,
  options: CompletionOptions = {},
): Promise<(Completed | undefined)[]> {
  const { fence, alsoWrite, lease } = options
  if (requests.length === 0) return []
  const atOnce = await completeAtOnce(db, requests, now, options)
  if (atOnce) return atOnce
  return db.transaction().execute(async (trx) => {
    const ids = [...new Set(requests.map((r) => r.id))].sort()
    const rows = await lockForCompletion(trx, ids, fence)
    const current = new Map(rows.map((row) => [row.id, row]))
    const taken = await identitiesTaken(trx, requests)
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
    const completed = new Set<string>()
    const updates: StatusUpdate[] = []
    const watches: SuccessWatch[] = []
    const dropped = new Set(requests.filter((r) => r.dropMatch).map((r) => r.id))
    for (const request of requests) {
      const { id, completion } = request
      const row = current.get(id)
      if (!row || row.status !== 'pending' || completed.has(id)) continue
      if (taken.has(id)) {
        // The account already tracks this transaction's (sender, nonce): the transaction is that
        // tracking's, not this one's payment. It stays pending and is searched for again.
        dropped.add(id)
        continue
      }
      completed.add(id)
      const confirmedAt = completion.status === 'success' ? await confirmedTime(trx, row.link_id, now, latestOfLink) : null
      updates.push(statusUpdateOf(id, completion, confirmedAt))
      watches.push(...watchOf(request))
    }
    const withCallback = [...completed].filter((id) => current.get(id)!.callback)
    const { parts, deliveryOf } = completionParts(trx, { watches, withCallback, dropped: [...dropped], alsoWrite, lease, now })
    const updated = await writeCompletions(trx, updates, parts, now)
    return inRequestOrder(requests, updated, deliveryOf)
  })
}

/**
 * The nonce-less successes whose (sender, nonce) another tracking of the same account already holds
 * (the unique identity): one statement for the whole batch, none when no success fills an identity.
 */
async function identitiesTaken(trx: Db, requests: readonly CompletionRequest[]): Promise<Set<string>> {
  const filling = requests.flatMap((r) =>
    r.completion.status === 'success' && r.completion.identity ? [{ id: r.id, ...r.completion.identity }] : [],
  )
  if (filling.length === 0) return new Set()
  const result = await sql<{ id: string }>`
    SELECT f.id FROM unnest(${filling.map((f) => f.id)}::text[], ${filling.map((f) => f.sender.toLowerCase())}::text[],
      ${filling.map((f) => f.nonce.toString())}::numeric[]) AS f(id, sender, nonce)
    JOIN trackings t ON t.id = f.id
    WHERE EXISTS (
      SELECT 1 FROM trackings o
      WHERE o.account_id = t.account_id AND o.blockchain = t.blockchain AND o.sender = f.sender AND o.nonce = f.nonce AND o.id <> f.id
    )`.execute(trx)
  return new Set(result.rows.map((row) => row.id))
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

/**
 * The lease check and the lock of the batch's rows (in id order) as one statement: the lease row is
 * read `FOR SHARE` beside them (holdFence's query), and every row carries whether it was there.
 */
async function lockForCompletion(trx: Db, ids: string[], fence: WriteFence | undefined) {
  const { rows } = await sql<{ id: string; status: string; link_id: string | null; callback: string | null; fenced: number }>`
    ${fence ? sql`WITH fence AS (${fenceHold(fence)})` : sql``}
    SELECT id, status, link_id, callback, ${fence ? sql`(SELECT count(*) FROM fence)::int` : sql`1`} AS fenced
    FROM trackings WHERE id = ANY(${ids}::text[])
    ORDER BY id
    FOR UPDATE`.execute(trx)
  if (fence) {
    // No row: nothing said whether the lease holds (the block record may still be written).
    if (rows.length === 0) await holdFence(trx, fence)
    else if (rows[0]!.fenced === 0) throw new LeadershipLostError(fence.chain)
  }
  return rows
}
