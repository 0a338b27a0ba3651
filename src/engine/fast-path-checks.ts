import type { Logger } from 'pino'
import { failureFields } from '../chain/rpc-failure.ts'
import { backoffPolicies, delayFor } from '../common/backoff.ts'
import type { Clock } from '../common/clock.ts'
import { isRetryable } from '../common/errors.ts'
import { createLine } from '../common/line.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { findOwedChecks, settleOwedChecks } from '../store/owed-checks.ts'
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
  /** A chain's next sieve round waits for the follower's next head, or this long at most (default 1 s). */
  roundGapMs?: number
}

export interface FastPathChecks {
  /**
   * Checks `tracking` (its chain's next sieve round, then on its own if the sieve leaves it); resolves when this
   * attempt is done.
   */
  check(tracking: Tracking): Promise<void>
  /**
   * Starts the checks still owed on `chain` (store/owed-checks.ts) that this node is not running: those of
   * trackings stored by a node that stopped before checking them, and every trace's (only the chain's
   * follower, which calls this, can search the blocks it passed). Resolves once they are in line.
   */
  resume(chain: string): Promise<void>
  /** No new check or retry starts from now on. */
  halt(): void
  /** Waits for the checks under way, so that none writes to a closed database. */
  settle(): Promise<void>
}

/**
 * Trackings kept whole in the waiting lines; beyond this, a waiting tracking is kept by its id and
 * read again when its turn comes. A burst of creates outruns the checks: `bench:memory`, 20 s of
 * creates at ~1,150/s, left ~18,000 checks waiting, ~2 KB each while every one was a suspended call
 * with its own logger; an id costs ~100 bytes.
 */
const WHOLE_IN_LINE = 1_000

/** Waiting checks of one chain taken in one round: those kept by id read in one query, all sieved at once. */
const ROUND_MOST = 5_000

/** Owed checks one `resume` starts at most: the oldest. */
const RESUME_MOST = 100

/** An owed check of a tracking with a nonce or a transaction is resumed once this old: its node is checking it until then. */
const RESUME_AFTER_MS = 10_000

/** How often a chain whose next round waits for a new head looks at its follower's head (no I/O). */
const HEAD_LOOK_MS = 20

/** A check waiting for its turn: the tracking (or its id, re-read), its failures so far, its caller. */
interface Waiting {
  tracking: Tracking | string
  failures: number
  done: (retried?: boolean) => void
}

/** One chain's waiting checks and its sieve rounds: one at a time, one per head (or per `roundGapMs`). */
interface ChainLine {
  line: ReturnType<typeof createLine<Waiting>>
  rounding: boolean
  wake: NodeJS.Timeout | undefined
  lastHead: bigint | undefined
  lastAt: number | undefined
}

/**
 * New trackings wait in their chain's line for its next sieve round: one transaction-count request
 * per thousand of them, at the follower's newest head, sorts out those whose nonce is unused (the
 * blocks to come find them). A round starts at once when the follower learned of a head since the
 * last one, else at the next head or after `roundGapMs`: a burst of creates costs about one request
 * per block, not one per hundred trackings (`bench:bulk`: 66 requests per block during 100,000
 * creates). The ones left are checked one by one, `concurrency` at a time, and retried with backoff
 * (`backoffPolicies.fastPathCheck`) while the check fails for a reason that may pass; a
 * NonRetryableError ends the retries at once (the blocks to come judge the tracking anyway).
 */
export function createFastPathChecks(deps: FastPathChecksDeps): FastPathChecks {
  const concurrency = Math.max(1, deps.concurrency ?? 8)
  const roundGapMs = deps.roundGapMs ?? 1_000
  const lines = new Map<string, ChainLine>()
  const retries = new Set<NodeJS.Timeout>()
  const running = new Set<Promise<void>>()
  const checksWaiting = createLine<() => Promise<void>>()
  let checking = 0
  let waitingWhole = 0
  let stopped = false
  // How many checks of each tracking are in line, running or waiting to be retried: `resume` starts none of
  // those. A create or an attach always starts one (an attached trace is checked anew, by its transaction).
  const underWay = new Map<string, number>()

  const enqueue = (tracking: Tracking | string, chain: string, failures: number) =>
    new Promise<void>((resolve) => {
      if (stopped || !deps.chainOf(chain)) return resolve()
      const id = typeof tracking === 'string' ? tracking : tracking.id
      // A retry is counted already: the attempt that failed left it under way.
      if (failures === 0) underWay.set(id, (underWay.get(id) ?? 0) + 1)
      const done = (retried = false) => {
        if (!retried) {
          const left = (underWay.get(id) ?? 1) - 1
          if (left > 0) underWay.set(id, left)
          else underWay.delete(id)
        }
        resolve()
      }
      let state = lines.get(chain)
      if (!state)
        lines.set(chain, (state = { line: createLine(), rounding: false, wake: undefined, lastHead: undefined, lastAt: undefined }))
      const whole = typeof tracking !== 'string' && waitingWhole < WHOLE_IN_LINE
      if (whole) waitingWhole++
      state.line.push({ tracking: whole || typeof tracking === 'string' ? tracking : tracking.id, failures, done })
      // The creates of this turn of the event loop go in the same round.
      if (!state.wake && !state.rounding) state.wake = setTimeout(() => wake(chain), 0)
    })

  const wake = (name: string) => {
    const state = lines.get(name)!
    state.wake = undefined
    if (stopped || state.rounding || state.line.length === 0) return
    const chain = deps.chainOf(name)
    if (!chain) {
      for (let waiting = state.line.shift(); waiting; waiting = state.line.shift()) {
        if (typeof waiting.tracking !== 'string') waitingWhole--
        waiting.done()
      }
      return
    }
    const seen = chain.seenHead?.()
    const now = deps.clock().getTime()
    const newHead = seen !== undefined && (state.lastHead === undefined || seen > state.lastHead)
    const gapLeft = state.lastAt === undefined || newHead ? 0 : state.lastAt + roundGapMs - now
    if (gapLeft > 0) {
      state.wake = setTimeout(() => wake(name), seen === undefined ? gapLeft : Math.min(gapLeft, HEAD_LOOK_MS))
      state.wake.unref()
      return
    }
    state.lastHead = seen
    state.lastAt = now
    state.rounding = true
    const batch: Waiting[] = []
    while (batch.length < ROUND_MOST && state.line.length > 0) batch.push(state.line.shift()!)
    for (const waiting of batch) if (typeof waiting.tracking !== 'string') waitingWhole--
    track(
      round(chain, batch).finally(() => {
        state.rounding = false
        wake(name)
      }),
    )
  }

  const track = (work: Promise<void>) => {
    running.add(work)
    void work.finally(() => running.delete(work))
  }

  /** Reads the trackings kept by id, sieves them all, and hands those the sieve leaves to the one-by-one checks. */
  const round = async (chain: FastPathDeps, batch: Waiting[]): Promise<void> => {
    const ids = batch.flatMap((waiting) => (typeof waiting.tracking === 'string' ? [waiting.tracking] : []))
    let reread = new Map<string, Tracking>()
    try {
      if (ids.length > 0) reread = new Map((await findPendingTrackings(deps.db, ids)).map((t) => [t.id, t]))
    } catch (error) {
      deps.logger.warn({ err: error, trackings: ids.length }, 'could not re-read the trackings for their checks')
    }
    const items: { tracking: Tracking; waiting: Waiting }[] = []
    for (const waiting of batch) {
      const tracking = typeof waiting.tracking === 'string' ? reread.get(waiting.tracking) : waiting.tracking
      if (tracking && tracking.status === 'pending' && !stopped) items.push({ tracking, waiting })
      else waiting.done()
    }
    let left = items
    try {
      const unsieved = new Set(
        await sieveNewTrackings(
          chain,
          items.map((item) => item.tracking),
        ),
      )
      left = items.filter((item) => unsieved.has(item.tracking))
    } catch (error) {
      // Each is checked on its own instead, with its own retries.
      deps.logger.warn({ ...failureFields(error), trackings: items.length }, 'sieving new trackings failed; checking them one by one')
    }
    const leftSet = new Set(left)
    const sortedOut = items.filter((item) => !leftSet.has(item))
    await settle(sortedOut.map((item) => item.tracking.id))
    for (const item of sortedOut) item.waiting.done()
    for (const item of left) {
      checksWaiting.push(() =>
        attempt(chain, item.tracking, item.waiting.failures).then(
          (retried) => item.waiting.done(retried),
          () => item.waiting.done(),
        ),
      )
    }
    startChecks()
  }

  const startChecks = () => {
    while (!stopped && checking < concurrency && checksWaiting.length > 0) {
      const check = checksWaiting.shift()!
      checking++
      track(
        check().finally(() => {
          checking--
          startChecks()
        }),
      )
    }
  }

  /** The owed checks of `ids` are done (store/owed-checks.ts); where that fails, they are run again later. */
  const settle = async (ids: string[]) => {
    try {
      await settleOwedChecks(deps.db, ids)
    } catch (error) {
      deps.logger.warn({ err: error, trackings: ids.length }, 'could not record new trackings as checked; they will be checked again')
    }
  }

  /** Checks one tracking; true when it failed and a retry is set. */
  const attempt = async (chain: FastPathDeps, tracking: Tracking, failures: number): Promise<boolean> => {
    if (stopped) return false
    const log = deps.logger.child({ chain: tracking.blockchain, tracking: tracking.id })
    try {
      const result = await checkNewTracking(chain, tracking)
      log.debug({ result }, 'new tracking checked')
      // A trace's search settles its own row (trace-searches.ts): only once its blocks are all searched.
      if (!isTrace(tracking)) await settle([tracking.id])
      return false
    } catch (error) {
      if (!isRetryable(error)) {
        log.error(failureFields(error), 'new tracking could not be checked; the blocks to come will judge it')
        await settle([tracking.id])
        return false
      }
      const delay = delayFor(backoffPolicies.fastPathCheck, failures + 1)
      const age = deps.clock().getTime() - tracking.createdAt.getTime()
      if (age > deps.trackingTimeoutSec * 1000) return false
      log.warn({ ...failureFields(error), retryInMs: delay }, 'new tracking check failed; retrying')
      const timer = setTimeout(() => {
        retries.delete(timer)
        // Read again when its turn comes: it may have completed meanwhile.
        void enqueue(tracking.id, tracking.blockchain, failures + 1)
      }, delay)
      timer.unref()
      retries.add(timer)
      return true
    }
  }

  const resume = async (chain: string) => {
    if (stopped || !deps.chainOf(chain)) return
    const owed = await findOwedChecks(deps.db, chain, RESUME_MOST, RESUME_AFTER_MS)
    // Their trackings completed (or went): nothing is left to check.
    await settle(owed.flatMap((o) => (o.tracking ? [] : [o.trackingId])))
    for (const { tracking } of owed) if (tracking && !underWay.has(tracking.id)) void enqueue(tracking, chain, 0)
  }

  return {
    check: (tracking) => enqueue(tracking, tracking.blockchain, 0),
    resume,
    halt() {
      stopped = true
      for (const timer of retries) clearTimeout(timer)
      // The waiting ones never start; their callers are answered.
      for (const state of lines.values()) {
        clearTimeout(state.wake)
        for (let waiting = state.line.shift(); waiting; waiting = state.line.shift()) waiting.done()
      }
      for (let check = checksWaiting.shift(); check; check = checksWaiting.shift()) void check()
    },
    async settle() {
      while (running.size > 0) await Promise.allSettled([...running])
    },
  }
}

/** A trace (no nonce, no transaction) is found by receiver; its check is a search of the blocks passed. */
const isTrace = (tracking: Tracking) => tracking.nonce === null && !tracking.transaction
