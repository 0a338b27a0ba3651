import type { Logger } from 'pino'
import type { Clock } from '../common/clock.ts'
import type { TrackingEvents } from '../common/tracking-events.ts'
import { completeTracking } from '../store/complete-tracking.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { deleteMatches, findExpiredTrackings } from '../store/tracking-matches.ts'

export interface SweeperDeps {
  db: Db
  clock: Clock
  events: TrackingEvents
  logger: Logger
  /** PAYWATCH_TRACKING_TIMEOUT */
  timeoutSec: number
  onCompleted?: (chain: string) => void
}

const BATCH = 200

/**
 * Fails the trackings still pending `timeoutSec` after their creation with TRACKING_TIMED_OUT. The
 * time-out is measured on the database's clock (findExpiredTrackings), never this node's: a node
 * whose clock steps does not fail other nodes' payments; its clock only stamps the change. A
 * tracking whose transaction is mined and confirming is left to its confirmations. Safe on every
 * node at once: a tracking completes once (completeTracking changes only pending ones). Returns how
 * many it completed.
 */
export async function sweepTimedOut(deps: SweeperDeps): Promise<number> {
  let completed = 0
  for (;;) {
    const ids = await findExpiredTrackings(deps.db, deps.timeoutSec, BATCH)
    for (const id of ids) {
      const now = deps.clock()
      const done = await completeTracking(deps.db, id, { status: 'failed', failedReason: 'TRACKING_TIMED_OUT' }, now)
      await deleteMatches(deps.db, [id])
      if (!done) continue
      completed++
      deps.onCompleted?.(done.blockchain)
      deps.logger.info({ chain: done.blockchain, tracking: done.id }, 'tracking timed out')
      deps.events.emit('completed', done)
    }
    if (ids.length < BATCH) return completed
  }
}
