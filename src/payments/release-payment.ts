import type { ReleaseRequest } from '../domain/release-request.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { findReleaseCandidate } from '../store/payment-lookups.ts'
import { releaseTracking } from '../store/release-tracking.ts'
import type { TrackingEvents } from '../common/tracking-events.ts'
import type { Clock } from '../common/clock.ts'

export type ReleaseOutcome =
  | { kind: 'released'; tracking: Tracking }
  | { kind: 'already-released'; tracking: Tracking }
  | { kind: 'pending' }
  | { kind: 'not-found' }

export interface ReleasePaymentDeps {
  db: Db
  events: TrackingEvents
  now: Clock
}

/**
 * POST /v2/payments/release after the body was read (docs/api.md §4): the fields must name a
 * tracking of the caller's account; a completed one is released (idempotent), a pending one is not.
 */
export async function releasePayment(deps: ReleasePaymentDeps, accountId: string, request: ReleaseRequest): Promise<ReleaseOutcome> {
  const candidate = await findReleaseCandidate(deps.db, accountId, request.secretId)
  if (!candidate || !namesPayment(candidate.tracking, candidate.replacedTransaction, request)) return { kind: 'not-found' }
  if (candidate.tracking.status === 'pending') return { kind: 'pending' }

  const result = await releaseTracking(deps.db, candidate.tracking.id, deps.now())
  // Completed trackings never become pending again, so this is only a deleted row.
  if (!result) return { kind: 'not-found' }
  if (!result.changed) return { kind: 'already-released', tracking: result.tracking }
  deps.events.emit('released', result.tracking)
  return { kind: 'released', tracking: result.tracking }
}

/**
 * Blockchain, sender and nonce must be the tracking's. The transaction may be the one the record
 * carries now or the one it carried before the engine judged a replacing transaction (a speed-up
 * or cancel consumes the same nonce, so both name this payment). A field the record does not have
 * (a payment tracked without a nonce that ended before its transaction was seen: timed out, or failed
 * on its sender) cannot be compared: any value is accepted there, null included, so that its waiting
 * user can still be released.
 */
function namesPayment(tracking: Tracking, replacedTransaction: string | null, request: ReleaseRequest): boolean {
  if (tracking.blockchain !== request.blockchain) return false
  if (tracking.sender !== null && tracking.sender !== request.sender) return false
  if (tracking.nonce !== null && tracking.nonce !== request.nonce) return false
  if (tracking.transaction === null) return true
  if (request.transaction === null) return false
  return request.transaction === tracking.transaction || request.transaction === replacedTransaction
}
