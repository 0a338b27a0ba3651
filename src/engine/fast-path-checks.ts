import type { Logger } from 'pino'
import { failureFields } from '../chain/rpc-failure.ts'
import { backoffPolicies, delayFor } from '../common/backoff.ts'
import type { Clock } from '../common/clock.ts'
import { isRetryable } from '../common/errors.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { findPendingTrackings } from '../store/tracking-matches.ts'
import { checkNewTracking, sieveNewTrackings, type FastPathDeps } from './fast-path.ts'

export interface FastPathChecksDeps {
  db: Db
  logger: Logger
  clock: Clock
  /** The fast-path dependencies of a tracked chain; undefined for a chain this node does not track. */
  chainOf(name: string): FastPathDeps | undefined
  /** A tracking older than this is left to the time-out sweeper: no more retries. */
  trackingTimeoutSec: number
  /** Checks (of trackings the sieve left) running at once. */
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

/** Waiting checks taken at once: sieved in one transaction-count batch, their trackings read in one query. */
const SIEVE_BATCH = 100

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
  // Two batches at once (one sieving while the other's few left are checked), `concurrency` checks in all.
  const batchesAtOnce = Math.min(2, concurrency)
  const checksPerBatch = Math.max(1, Math.floor(concurrency / batchesAtOnce))
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

  /**
   * Takes up to `SIEVE_BATCH` waiting checks at once: their trackings are read (those kept by id in one
   * query), sieved per chain in two requests (sieveNewTrackings), and only the ones the sieve leaves are
   * checked one by one, `concurrency` at a time.
   */
  const pump = () => {
    while (!stopped && running.size < batchesAtOnce && line.length > 0) {
      const batch: Waiting[] = []
      while (batch.length < SIEVE_BATCH && line.length > 0) batch.push(line.shift()!)
      const work = attemptBatch(batch).finally(() => {
        for (const waiting of batch) waiting.done()
      })
      running.add(work)
      void work.finally(() => {
        running.delete(work)
        pump()
      })
    }
  }

  const attemptBatch = async (batch: Waiting[]): Promise<void> => {
    const ids = batch.flatMap((waiting) => (typeof waiting.tracking === 'string' ? [waiting.tracking] : []))
    let reread = new Map<string, Tracking>()
    try {
      if (ids.length > 0) reread = new Map((await findPendingTrackings(deps.db, ids)).map((t) => [t.id, t]))
    } catch (error) {
      deps.logger.warn({ err: error, trackings: ids.length }, 'could not re-read the trackings for their checks')
    }
    const byChain = new Map<FastPathDeps, { tracking: Tracking; failures: number }[]>()
    for (const waiting of batch) {
      const tracking = typeof waiting.tracking === 'string' ? reread.get(waiting.tracking) : waiting.tracking
      const chain = tracking && deps.chainOf(tracking.blockchain)
      if (!tracking || !chain || tracking.status !== 'pending') continue
      const group = byChain.get(chain) ?? []
      group.push({ tracking, failures: waiting.failures })
      byChain.set(chain, group)
    }
    for (const [chain, group] of byChain) {
      if (stopped) return
      let left = group
      try {
        const unsieved = new Set(
          await sieveNewTrackings(
            chain,
            group.map((item) => item.tracking),
          ),
        )
        left = group.filter((item) => unsieved.has(item.tracking))
      } catch (error) {
        // Each is checked on its own instead, with its own retries.
        deps.logger.warn({ ...failureFields(error), trackings: group.length }, 'sieving new trackings failed; checking them one by one')
      }
      let next = 0
      const worker = async () => {
        while (!stopped && next < left.length) {
          const item = left[next++]!
          await attempt(chain, item.tracking, item.failures)
        }
      }
      await Promise.all(Array.from({ length: Math.min(checksPerBatch, left.length) }, worker))
    }
  }

  const attempt = async (chain: FastPathDeps, tracking: Tracking, failures: number): Promise<void> => {
    if (stopped) return
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
