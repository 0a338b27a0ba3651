import type { Tracking } from '../domain/tracking.ts'
import type { Completed, Completion, CompletionRequest } from './completion-types.ts'
import type { StatusUpdate, WritePart } from './completion-writes.ts'
import type { Db } from './infrastructure/database.ts'
import { deliveryRowsInsert, newDeliveryRows, type DeliveryLease } from './delivery-rows.ts'
import { successWatchesInsert, type SuccessWatch } from './success-watches.ts'
import { matchesDelete } from './tracking-matches.ts'

/** One tracking's status change as `writeCompletions` writes it. */
export function statusUpdateOf(id: string, completion: Completion, confirmedAt: Date | null): StatusUpdate {
  const identity = completion.status === 'success' ? completion.identity : undefined
  return {
    id,
    status: completion.status,
    failedReason: completion.status === 'failed' ? completion.failedReason : null,
    transaction: completion.transaction ?? null,
    sender: identity?.sender ?? null,
    nonce: identity ? identity.nonce.toString() : null,
    confirmedAt,
  }
}

/** A success's block, watched until it is final (none for a failure, or a success without its block). */
export const watchOf = (request: CompletionRequest): SuccessWatch[] =>
  request.completion.status === 'success' && request.completion.inclusion
    ? [{ trackingId: request.id, transaction: request.completion.transaction, ...request.completion.inclusion }]
    : []

/**
 * What is written beside a batch's status changes, each part built by the module that owns its table: the
 * success watches, a delivery row per completed tracking with a callback (ids made here, answered by
 * tracking), the dropped matches and `alsoWrite` (the block record).
 */
export function completionParts(
  trx: Db,
  batch: {
    watches: SuccessWatch[]
    withCallback: string[]
    dropped: string[]
    alsoWrite?: (trx: Db) => WritePart
    lease?: DeliveryLease
    now: Date
  },
): { parts: WritePart[]; deliveryOf: Map<string, string> } {
  const deliveries = newDeliveryRows(
    batch.withCallback.map((trackingId) => ({ trackingId, reason: 'completed' as const })),
    batch.now,
    batch.lease,
  )
  const parts: WritePart[] = []
  if (batch.watches.length > 0) parts.push(successWatchesInsert(trx, batch.watches, batch.now))
  if (deliveries.length > 0) parts.push(deliveryRowsInsert(trx, deliveries))
  if (batch.dropped.length > 0) parts.push(matchesDelete(trx, batch.dropped))
  if (batch.alsoWrite) parts.push(batch.alsoWrite(trx))
  return { parts, deliveryOf: new Map(deliveries.map((row) => [row.tracking_id, row.id!])) }
}

/** Results in the order of `requests` (a tracking asked twice is answered once). */
export function inRequestOrder(
  requests: readonly CompletionRequest[],
  updated: Map<string, Tracking>,
  deliveryOf: Map<string, string>,
): (Completed | undefined)[] {
  const answered = new Set<string>()
  return requests.map((request): Completed | undefined => {
    if (answered.has(request.id)) return undefined
    answered.add(request.id)
    const tracking = updated.get(request.id)
    return tracking && { tracking, deliveryId: deliveryOf.get(request.id) ?? null }
  })
}
