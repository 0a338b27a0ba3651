import type { Logger } from 'pino'
import type { Clock } from '../common/clock.ts'
import type { TrackingEvents } from '../common/tracking-events.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { endpointUrlOf } from '../domain/endpoint-url.ts'
import { recordAttempts, type AttemptOutcome } from '../store/attempt-records.ts'
import { recordEndpointHealth, successfulEndpointsUpsert, type DisabledEndpoint, type EndpointAttempt } from '../store/endpoint-health.ts'

/** Outcomes per transaction at most. */
const WRITE_BATCH = 500

/**
 * How long a write waits at most for the answers of requests still on their way. A block's callbacks
 * leave together and their answers come within a few ms of each other: waiting for the last makes them
 * one statement, where a write per turn of the event loop made one and a half (docs/performance.md).
 */
const ANSWERS_WAIT_MS = 10

/**
 * Records attempt outcomes in batches (group commit): one write runs at a time, and whatever finished
 * while it ran goes into the next transaction. Trackings a 200 released are announced as `released`.
 */
export interface OutcomeRecorder {
  /** Queues an outcome; it is written with every other answer read in the same turn of the event loop. */
  add(outcome: AttemptOutcome): void
  /** Resolves once the outcomes queued so far are written (or given up on). */
  flushed(): Promise<void>
}

export function createOutcomeRecorder(deps: {
  db: Db
  clock: Clock
  logger: Logger
  events: TrackingEvents
  /** A batch was written, or failed and was given up on: its deliveries are no longer in hand. */
  onWritten(batch: AttemptOutcome[]): void
  /** Endpoint health (docs/api.md §8): recorded after each batch; endpoints disabled by it are reported. */
  endpointHealth?: { disableAfterMs: number; onDisabled(endpoints: DisabledEndpoint[]): void }
  /** Requests sent and not answered yet: a write waits for their answers, up to `answersWaitMs` (ANSWERS_WAIT_MS). */
  unanswered?: () => number
  answersWaitMs?: number
}): OutcomeRecorder {
  const { db, clock, logger, events } = deps
  const pending: AttemptOutcome[] = []
  let writing: Promise<void> | undefined

  async function writeAll(): Promise<void> {
    while (pending.length > 0) {
      const batch = pending.splice(0, WRITE_BATCH)
      try {
        const now = clock()
        const attempts = deps.endpointHealth ? endpointAttemptsOf(batch) : []
        // A batch in which every attempt succeeded notes its endpoints' health in the attempts' own statement.
        const healthy = successfulEndpointsUpsert(attempts, now)
        const released = await recordAttempts(db, batch, now, healthy)
        for (const tracking of released) events.emit('released', tracking)
        if (!healthy) await recordHealth(attempts)
      } catch (error) {
        // The deliveries stay leased and become due again when the lease ends: at least once.
        logger.error({ err: error, count: batch.length }, 'callback attempts could not be recorded; they will be retried')
      }
      deps.onWritten(batch)
    }
  }

  async function recordHealth(attempts: EndpointAttempt[]): Promise<void> {
    if (!deps.endpointHealth || attempts.length === 0) return
    try {
      const disabled = await recordEndpointHealth(db, attempts, clock(), deps.endpointHealth.disableAfterMs)
      if (disabled.length > 0) deps.endpointHealth.onDisabled(disabled)
    } catch (error) {
      // The attempts are recorded; the next batch of this endpoint updates its health again.
      logger.warn({ err: error }, 'endpoint health could not be recorded')
    }
  }

  /** While a write waits for answers: looks again, on the next turn of the event loop (another answer came). */
  let lookAgain: (() => void) | undefined

  /**
   * Resolves on the first turn of the event loop at which no request awaits its answer (so every answer
   * read in that turn joins the batch), or `answersWaitMs` after the first outcome at the latest.
   */
  const answersIn = (): Promise<void> =>
    new Promise((resolve) => {
      const done = () => {
        clearTimeout(latest)
        lookAgain = undefined
        resolve()
      }
      const latest = setTimeout(done, deps.answersWaitMs ?? ANSWERS_WAIT_MS)
      // Looked at on the next turn: an answer's settling may start the request that waited for its slot.
      lookAgain = () => setImmediate(() => lookAgain && (deps.unanswered?.() ?? 0) === 0 && done())
      lookAgain()
    })

  return {
    add(outcome) {
      pending.push(outcome)
      if (writing) return lookAgain?.()
      writing = answersIn()
        .then(writeAll)
        .finally(() => (writing = undefined))
    },
    flushed: async () => await writing,
  }
}

/** What each attempt said about its endpoint (an attempt without a callback URL says nothing). */
function endpointAttemptsOf(batch: AttemptOutcome[]): EndpointAttempt[] {
  const attempts: EndpointAttempt[] = []
  for (const o of batch) {
    const url = endpointUrlOf(o.delivery.tracking.callback)
    if (url === null) continue
    const succeeded = o.outcome === 'delivered' || o.outcome === 'accepted'
    attempts.push({ accountId: o.delivery.tracking.accountId, url, succeeded, gone: o.gone ?? false })
  }
  return attempts
}
