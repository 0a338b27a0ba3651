import { sql } from 'kysely'
import type { FailedReason, Tracking } from '../domain/tracking.ts'
import { holdFence, type WriteFence } from './chain-leases.ts'
import type { Db } from './infrastructure/database.ts'
import { insertDeliveries, type DeliveryLease } from './delivery-rows.ts'
import { insertSuccessWatches, type SuccessWatch } from './success-watches.ts'
import { deleteMatches } from './tracking-matches.ts'
import { rowToTracking, type TrackingRow } from './trackings.ts'

export type Completion =
  /** `inclusion`: the paying transaction's block, watched until it is final (see success-watches.ts). */
  /**
   * `identity`: a nonce-less tracking's paying transaction's sender and nonce, filled in with the success
   * (docs/api.md, "Payments without a nonce").
   */
  | {
      status: 'success'
      transaction: string
      inclusion?: { chain: string; blockNumber: bigint; blockHash: string }
      identity?: { sender: string; nonce: bigint }
    }
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
  return (await completeTrackings(db, [{ id, completion }], now, { fence }))[0]?.tracking
}

/** A completed tracking and its callback's delivery row (null: it has no callback). */
export interface Completed {
  tracking: Tracking
  deliveryId: string | null
}

export interface CompletionOptions {
  /** The chain follower's lease: nothing is written unless this node still holds it. */
  fence?: WriteFence
  /** Written in the same transaction (the block the verdicts were judged on, as processed). */
  alsoWrite?: (trx: Db) => Promise<void>
  /** The delivery rows are inserted claimed by this worker (a hand-off, delivery-rows.ts). */
  lease?: DeliveryLease
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
  options: CompletionOptions = {},
): Promise<(Completed | undefined)[]> {
  const { fence, alsoWrite, lease } = options
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
    for (const { id, completion } of requests) {
      const row = current.get(id)
      if (!row || row.status !== 'pending' || completed.has(id)) continue
      if (taken.has(id)) {
        // The account already tracks this transaction's (sender, nonce): the transaction is that
        // tracking's, not this one's payment. It stays pending and is searched for again.
        await deleteMatches(trx, [id])
        continue
      }
      completed.add(id)
      const identity = completion.status === 'success' ? completion.identity : undefined
      updates.push({
        id,
        status: completion.status,
        failedReason: completion.status === 'failed' ? completion.failedReason : null,
        transaction: completion.transaction ?? null,
        sender: identity?.sender ?? null,
        nonce: identity ? identity.nonce.toString() : null,
        confirmedAt: completion.status === 'success' ? await confirmedTime(trx, row.link_id, now, latestOfLink) : null,
      })
      if (completion.status === 'success' && completion.inclusion) {
        watches.push({ trackingId: id, transaction: completion.transaction, ...completion.inclusion })
      }
    }
    // One statement for every status change and one for the watches: on the embedded database each
    // statement is a turn of its one connection, and a block's ten verdicts were twenty of them.
    const updated = await updateStatuses(trx, updates, now)
    await insertSuccessWatches(trx, watches, now)
    const withCallback = [...completed].filter((id) => current.get(id)!.callback)
    const inserted = await insertDeliveries(
      trx,
      withCallback.map((trackingId) => ({ trackingId, reason: 'completed' })),
      now,
      lease,
    )
    const deliveryOf = new Map(inserted.map((row) => [row.tracking_id, row.id]))
    const answered = new Set<string>()
    const results = requests.map((request): Completed | undefined => {
      if (answered.has(request.id)) return undefined
      answered.add(request.id)
      const tracking = updated.get(request.id)
      return tracking && { tracking, deliveryId: deliveryOf.get(request.id) ?? null }
    })
    const dropped = requests.filter((r) => r.dropMatch).map((r) => r.id)
    await deleteMatches(trx, dropped)
    await alsoWrite?.(trx)
    return results
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

interface StatusUpdate {
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

/** The status changes of a batch in one UPDATE … FROM (VALUES …); the updated trackings by id. */
async function updateStatuses(trx: Db, updates: StatusUpdate[], now: Date): Promise<Map<string, Tracking>> {
  if (updates.length === 0) return new Map()
  const values = sql.join(
    updates.map(
      (u) =>
        sql`(${u.id}::text, ${u.status}::text, ${u.failedReason}::text, ${u.transaction}::text, ${u.sender}::text, ${u.nonce}::numeric, ${u.confirmedAt}::timestamptz)`,
    ),
  )
  const { rows } = await sql<TrackingRow>`
    UPDATE trackings AS t
    SET status = v.status, failed_reason = v.failed_reason, "transaction" = COALESCE(v."transaction", t."transaction"),
      sender = COALESCE(v.sender, t.sender), nonce = COALESCE(v.nonce, t.nonce), confirmed_at = v.confirmed_at, updated_at = ${now}
    FROM (VALUES ${values}) AS v(id, status, failed_reason, "transaction", sender, nonce, confirmed_at)
    WHERE t.id = v.id
    RETURNING t.*`.execute(trx)
  return new Map(rows.map((row) => [row.id, rowToTracking(row)]))
}
