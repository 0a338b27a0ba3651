import type { Logger } from 'pino'
import { failureFields } from '../chain/rpc-failure.ts'
import { backoffPolicies, delayFor } from '../common/backoff.ts'
import type { Clock } from '../common/clock.ts'
import { isRetryable } from '../common/errors.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { Db } from '../store/database.ts'
import { findPendingTracking } from '../store/tracking-matches.ts'
import { checkNewTracking, type FastPathDeps } from './fast-path.ts'

export interface FastPathChecksDeps {
  db: Db
  logger: Logger
  clock: Clock
  /** The fast-path dependencies of a tracked chain; undefined for a chain this node does not track. */
  chainOf(name: string): FastPathDeps | undefined
  /** A tracking older than this is left to the time-out sweeper: no more retries. */
  trackingTimeoutSec: number
  /** Checks running at once. */
  concurrency?: number
}

export interface FastPathChecks {
  /** Checks `tracking` now (at most `concurrency` at once); resolves when this attempt is done. */
  check(tracking: Tracking): Promise<void>
  /** No new check or retry starts from now on. */
  halt(): void
  /** Waits for the checks under way, so that none writes to a closed database. */
  settle(): Promise<void>
}

/**
 * A new tracking is checked at once, a few at a time, and retried with backoff
 * (`backoffPolicies.fastPathCheck`) while the check fails for a reason that may pass; a
 * NonRetryableError ends the retries at once (the blocks to come judge the tracking anyway).
 */
export function createFastPathChecks(deps: FastPathChecksDeps): FastPathChecks {
  const slots = createSlots(deps.concurrency ?? 8)
  const retries = new Set<NodeJS.Timeout>()
  const inFlight = new Set<Promise<void>>()
  let stopped = false

  const track = (work: Promise<void>) => {
    inFlight.add(work)
    void work.finally(() => inFlight.delete(work))
    return work
  }

  const check = async (tracking: Tracking, failures = 0): Promise<void> => {
    const chain = deps.chainOf(tracking.blockchain)
    if (!chain || stopped || tracking.status !== 'pending') return
    const log = deps.logger.child({ chain: tracking.blockchain, tracking: tracking.id })
    try {
      const result = await slots.run(() => checkNewTracking(chain, tracking))
      log.debug({ result }, 'new tracking checked')
    } catch (error) {
      if (!isRetryable(error)) {
        log.error(failureFields(error), 'new tracking could not be checked; the blocks to come will judge it')
        return
      }
      const delay = delayFor(backoffPolicies.fastPathCheck, failures + 1)
      const age = deps.clock().getTime() - tracking.createdAt.getTime()
      if (age > deps.trackingTimeoutSec * 1000) return
      log.warn({ ...failureFields(error), retryInMs: delay }, 'new tracking check failed; retrying')
      const timer = setTimeout(() => {
        retries.delete(timer)
        void track(
          findPendingTracking(deps.db, tracking.id)
            .then((fresh) => (fresh ? check(fresh, failures + 1) : undefined))
            .catch((err: unknown) => log.warn({ err }, 'could not re-read the tracking for its check')),
        )
      }, delay)
      timer.unref()
      retries.add(timer)
    }
  }

  return {
    check: (tracking) => track(check(tracking)),
    halt() {
      stopped = true
      for (const timer of retries) clearTimeout(timer)
    },
    async settle() {
      await Promise.allSettled([...inFlight])
    },
  }
}

/** At most `concurrency` pieces of work at once; the others wait their turn in order. */
function createSlots(concurrency: number) {
  let active = 0
  const waiting: (() => void)[] = []
  return {
    async run<T>(work: () => Promise<T>): Promise<T> {
      if (active >= concurrency) await new Promise<void>((resolve) => waiting.push(resolve))
      active++
      try {
        return await work()
      } finally {
        active--
        waiting.shift()?.()
      }
    },
  }
}
