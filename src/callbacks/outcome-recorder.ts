import type { Logger } from 'pino'
import type { Clock } from '../common/clock.ts'
import type { TrackingEvents } from '../common/tracking-events.ts'
import type { Db } from '../store/database.ts'
import { recordAttempts, type AttemptOutcome } from '../store/deliveries.ts'

/** Outcomes per transaction at most. */
const WRITE_BATCH = 500

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
}): OutcomeRecorder {
  const { db, clock, logger, events } = deps
  const pending: AttemptOutcome[] = []
  let writing: Promise<void> | undefined

  async function writeAll(): Promise<void> {
    while (pending.length > 0) {
      const batch = pending.splice(0, WRITE_BATCH)
      try {
        const released = await recordAttempts(db, batch, clock())
        for (const tracking of released) events.emit('released', tracking)
      } catch (error) {
        // The deliveries stay leased and become due again when the lease ends: at least once.
        logger.error({ err: error, count: batch.length }, 'callback attempts could not be recorded; they will be retried')
      }
      deps.onWritten(batch)
    }
  }

  return {
    add(outcome) {
      pending.push(outcome)
      // Started on the next turn of the event loop, so every answer read in this one joins the batch.
      writing ??= new Promise((resolve) => setImmediate(resolve)).then(writeAll).finally(() => (writing = undefined))
    },
    flushed: async () => await writing,
  }
}
