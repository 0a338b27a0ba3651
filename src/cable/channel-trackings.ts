import { Counter } from 'prom-client'
import type { Common } from '../common/common.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { Db } from '../store/database.ts'
import { findFirstTrackingsOfPayments, type PaymentKey } from '../store/payment-lookups.ts'
import { keyString } from './hub.ts'

/** A cached answer is trusted this long at most, in case an event that should have cleared it was lost. */
const CACHE_TTL_MS = 2000
/** Payments whose answer is kept; the oldest are forgotten first. */
const CACHE_ENTRIES = 10_000
/** Payments read in one statement. */
const BATCH_SIZE = 200

export interface ChannelTrackings {
  /** The tracking the channel of the payment follows (the first created), as stored now; undefined when none. */
  of(key: PaymentKey): Promise<Tracking | undefined>
  /** A tracking of the payment changed: the next `of` reads it again. */
  forget(key: PaymentKey): void
  /** Events may have been missed (the LISTEN connection was down): read everything again. */
  forgetAll(): void
}

/**
 * Every subscribe asks the database what its payment's widget should be shown; a client that sends
 * hundreds of subscribes must not cost hundreds of reads. Payments asked for while a read is on its
 * way are read together in the next one (one statement for many payments), a payment already being
 * read shares that read, and answers are cached until an event about the payment clears them.
 */
export function createChannelTrackings(common: Common, db: Db): ChannelTrackings {
  const reads = new Counter({
    name: 'paywatch_cable_state_reads_total',
    help: 'Database reads of the payments widget subscribers ask for (one read serves many payments)',
    registers: [common.metrics.registry],
  })
  const cache = new Map<string, { tracking: Tracking | undefined; at: number }>()
  /** Bumped by `forget`: a read that began before it must not cache what it found. */
  const generations = new Map<string, number>()
  let generationAll = 0
  const waiting = new Map<
    string,
    { key: PaymentKey; promise: Promise<Tracking | undefined>; settle(t: Tracking | undefined): void; fail(e: unknown): void }
  >()
  const inFlight = new Map<string, Promise<Tracking | undefined>>()
  let reading = false

  const readWaiting = async (): Promise<void> => {
    reading = true
    while (waiting.size > 0) {
      const batch = [...waiting.entries()].slice(0, BATCH_SIZE)
      for (const [k, entry] of batch) {
        waiting.delete(k)
        inFlight.set(k, entry.promise)
      }
      const startedAll = generationAll
      const started = new Map(batch.map(([k]) => [k, generations.get(k) ?? 0]))
      try {
        reads.inc()
        const found = new Map(
          (
            await findFirstTrackingsOfPayments(
              db,
              batch.map(([, e]) => e.key),
            )
          ).map((t) => [keyString(t as PaymentKey), t]),
        )
        const at = common.clock().getTime()
        for (const [k, entry] of batch) {
          const tracking = found.get(k)
          if (startedAll === generationAll && started.get(k) === (generations.get(k) ?? 0)) remember(k, tracking, at)
          entry.settle(tracking)
        }
      } catch (error) {
        for (const [, entry] of batch) entry.fail(error)
      } finally {
        for (const [k] of batch) {
          inFlight.delete(k)
          generations.delete(k)
        }
      }
    }
    reading = false
  }

  const remember = (k: string, tracking: Tracking | undefined, at: number) => {
    cache.delete(k)
    cache.set(k, { tracking, at })
    if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value!)
  }

  return {
    of(key) {
      const k = keyString(key)
      const cached = cache.get(k)
      if (cached && common.clock().getTime() - cached.at < CACHE_TTL_MS) return Promise.resolve(cached.tracking)
      const shared = inFlight.get(k) ?? waiting.get(k)?.promise
      if (shared) return shared
      let settle!: (t: Tracking | undefined) => void
      let fail!: (e: unknown) => void
      const promise = new Promise<Tracking | undefined>((resolve, reject) => ((settle = resolve), (fail = reject)))
      waiting.set(k, { key, promise, settle, fail })
      // The first subscribe of a burst waits one turn, so that the rest of its frames join its read.
      if (!reading) {
        reading = true
        setImmediate(() => void readWaiting())
      }
      return promise
    },
    forget(key) {
      const k = keyString(key)
      cache.delete(k)
      generations.set(k, (generations.get(k) ?? 0) + 1)
      // The generation only matters while a read of the payment is on its way.
      if (!inFlight.has(k)) generations.delete(k)
    },
    forgetAll() {
      cache.clear()
      generationAll++
    },
  }
}
