import type { Clock } from '../common/clock.ts'
import type { Db } from '../store/infrastructure/database.ts'
import * as deliveries from '../store/deliveries.ts'
import type { RedeliveryRequester } from '../store/schema.ts'
import type { AttemptRow, DeliveryRow } from '../store/deliveries.ts'
import { findTrackingBySecret } from '../store/trackings.ts'
import { notFound, type NotFound } from './admin-deps.ts'

/**
 * Operator tools for callbacks (docs/api.md §4, extensions), for the account that owns the payment:
 * another account's payment is a not-found like an unknown one, so ids do not leak.
 */

export async function listPaymentDeliveries(
  deps: { db: Db },
  accountId: string,
  secretId: string,
): Promise<{ kind: 'listed'; deliveries: (DeliveryRow & { attemptLog: AttemptRow[] })[] } | NotFound<'payment tracking'>> {
  const tracking = await findTrackingBySecret(deps.db, accountId, secretId)
  if (!tracking) return notFound('payment tracking')
  return { kind: 'listed', deliveries: await deliveries.listDeliveries(deps.db, tracking.id) }
}

export type RedeliverCallbackOutcome =
  | { kind: 'scheduled'; delivery: DeliveryRow }
  | { kind: 'pending' }
  | { kind: 'no-callback' }
  /** `vanished`: the payment was found, then gone when its deliveries were locked. */
  | (NotFound<'payment tracking'> & { vanished?: true })

export interface RedeliverDeps {
  db: Db
  clock: Clock
  /** A delivery became due now: wakes this process's workers (a CLI leaves it to the service's poll). */
  onScheduled?: () => void
}

/**
 * Sends a completed payment's callback again, due now; a delivery still waiting for a retry is
 * brought forward instead. A pending payment's callback is sent when it completes.
 */
export async function redeliverCallback(
  deps: RedeliverDeps,
  accountId: string,
  secretId: string,
  requestedBy: RedeliveryRequester,
): Promise<RedeliverCallbackOutcome> {
  const tracking = await findTrackingBySecret(deps.db, accountId, secretId)
  if (!tracking) return notFound('payment tracking')
  const outcome = await deliveries.redeliver(deps.db, tracking.id, deps.clock(), requestedBy)
  switch (outcome.kind) {
    case 'not-found':
      return { ...notFound('payment tracking'), vanished: true }
    case 'pending':
    case 'no-callback':
      return outcome
    case 'scheduled':
      deps.onScheduled?.()
      return { kind: 'scheduled', delivery: outcome.delivery }
  }
}
