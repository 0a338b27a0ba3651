import type { Logger } from 'pino'
import type { Clock } from '../common/clock.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { extendLeases } from '../store/deliveries.ts'
import type { HeldDeliveries } from './held-deliveries.ts'

/**
 * Renews the leases of what a worker still holds every third of the lease time, so a long
 * queue to a slow host is never taken over by another worker. Returns the stop.
 */
export function renewLeases(deps: {
  db: Db
  clock: Clock
  logger: Logger
  claim: string
  leaseMs: number
  held: HeldDeliveries
}): () => void {
  const { db, clock, logger, claim, leaseMs, held } = deps
  const timer = setInterval(
    () => {
      if (held.size === 0) return
      const now = clock()
      // Only what is in hand: a delivery whose outcome could not be written must become due again.
      extendLeases(db, claim, held.ids(), new Date(now.getTime() + leaseMs)).catch((error: unknown) =>
        logger.warn({ err: error }, 'renewing callback leases failed'),
      )
    },
    Math.max(1000, leaseMs / 3),
  )
  timer.unref()
  return () => clearInterval(timer)
}
