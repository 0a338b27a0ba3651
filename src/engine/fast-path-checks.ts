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
 * Trackings kept whole in the waiting line; beyond this, a waiting tracking is kept by its id and
 * read again when its turn comes. A burst of creates outruns the checks (each a few RPC calls):
 * `bench:memory`, 20 s of creates at ~1,150/s, left ~18,000 checks waiting, ~2 KB each while every
 * one was a suspended call with its own logger; an id costs ~100 bytes.
 */
const WHOLE_IN_LINE = 1_000

/** A check waiting for its turn: the tracking (or its id, re-read), its failures so far, its caller. */
interface Waiting {
  tracking: Tracking | string
  failures: number
  done: () => void
}

/**
 * A new tracking is checked at once, a few at a time (the others wait in line, in order), and
 * retried with backoff (`backoffPolicies.fastPathCheck`) while the check fails for a reason that may
 * pass; a NonRetryableError ends the retries at once (the blocks to come judge the tracking anyway).
 */
export function createFastPathChecks(deps: FastPathChecksDeps): FastPathChecks {
  const concurrency = deps.concurrency ?? 8
  const line = createLine<Waiting>()
  const retries = new Set<NodeJS.Timeout>()
  const running = new Set<Promise<void>>()
  let stopped = false

  const enqueue = (tracking: Tracking | string, failures: number) =>
    new Promise<void>((done) => {
      if (stopped) return done()
      line.push({ tracking: typeof tracking !== 'string' && line.length >= WHOLE_IN_LINE ? tracking.id : tracking, failures, done })
      pump()
    })

  const pump = () => {
    while (!stopped && running.size < concurrency && line.length > 0) {
      const next = line.shift()!
      const work = attempt(next).finally(next.done)
      running.add(work)
      void work.finally(() => {
        running.delete(work)
        pump()
      })
    }
  }

  const attempt = async ({ tracking: waiting, failures }: Waiting): Promise<void> => {
    let tracking: Tracking | undefined
    try {
      tracking = typeof waiting === 'string' ? await findPendingTracking(deps.db, waiting) : waiting
    } catch (error) {
      deps.logger.warn({ err: error, tracking: waiting }, 'could not re-read the tracking for its check')
      return
    }
    const chain = tracking && deps.chainOf(tracking.blockchain)
    if (!tracking || !chain || stopped || tracking.status !== 'pending') return
    const log = deps.logger.child({ chain: tracking.blockchain, tracking: tracking.id })
    try {
      const result = await checkNewTracking(chain, tracking)
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
      const id = tracking.id
      const timer = setTimeout(() => {
        retries.delete(timer)
        // Read again when its turn comes: it may have completed meanwhile.
        void enqueue(id, failures + 1)
      }, delay)
      timer.unref()
      retries.add(timer)
    }
  }

  return {
    check: (tracking) => enqueue(tracking, 0),
    halt() {
      stopped = true
      for (const timer of retries) clearTimeout(timer)
      // The waiting ones never start; their callers are answered.
      for (let waiting = line.shift(); waiting; waiting = line.shift()) waiting.done()
    },
    async settle() {
      await Promise.allSettled([...running])
    },
  }
}

/** A first-in first-out line whose shift is O(1) (Array#shift moves every element of a long line). */
function createLine<T>() {
  let items: (T | undefined)[] = []
  let head = 0
  return {
    get length() {
      return items.length - head
    },
    push(item: T) {
      items.push(item)
    },
    shift(): T | undefined {
      if (head >= items.length) return undefined
      const item = items[head]
      items[head++] = undefined
      // Compact once the consumed part is most of the array.
      if (head > 1024 && head * 2 > items.length) {
        items = items.slice(head)
        head = 0
      }
      return item
    },
  }
}
