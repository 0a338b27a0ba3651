import type { Logger } from 'pino'
import type { Clock } from '../common/clock.ts'
import type { RandomSource } from '../domain/retry-schedule.ts'
import type { TrackingEvents } from '../common/tracking-events.ts'
import type { Db } from '../store/database.ts'
import { claimDueDeliveries, extendLeases, postponeDeliveries, recordAttempts, type AttemptOutcome, type ClaimedDelivery } from '../store/deliveries.ts'
import { newId } from '../store/ids.ts'
import { classifyAttempt } from './classify.ts'
import type { CallbackMetrics } from './metrics.ts'
import { createAttemptPipeline } from './pipeline.ts'
import type { CallbackSender, SendResult } from './sender.ts'
import type { CallbackSigner } from './signer.ts'

export interface DeliveryWorkerDeps {
  db: Db
  clock: Clock
  logger: Logger
  signer: CallbackSigner
  sender: CallbackSender
  events: TrackingEvents
  metrics: CallbackMetrics
  /** Per-attempt timeout; the lease adds a margin to it. */
  timeoutMs: number
  random?: RandomSource
  /** HTTP attempts in flight at once (all hosts). */
  concurrency?: number
  /** HTTP attempts in flight at once to one host: a slow host never takes every slot. */
  perHost?: number
  /** Signatures being made at once (on the libuv pool). */
  signing?: number
  /** How often the database is checked for due deliveries when nothing wakes the worker. */
  pollMs?: number
  /** Worker name in the attempt log. */
  name?: string
}

export interface DeliveryWorker {
  readonly name: string
  /** Starts the claim loop. */
  start(): void
  /** A delivery may be due now (a completion, a redelivery). */
  wake(): void
  /** Claims what is due now, makes those attempts and records them; returns how many were claimed. For tests and tools. */
  runOnce(): Promise<number>
  /** Stops claiming and waits for the attempts in flight to be recorded. */
  stop(): Promise<void>
}

const CLAIM_BATCH = 100
const WRITE_BATCH = 500
/** Time a worker holds a claimed delivery beyond the attempt timeout; renewed while it still holds it. */
const LEASE_MARGIN_MS = 30_000

/**
 * Delivers due callbacks: claims batches (lease query, SKIP LOCKED), signs and POSTs each through the
 * attempt pipeline, and records every attempt. Results are written in batches: whatever finished while
 * the previous write ran goes into the next transaction. A host with more deliveries due than its
 * share gets the rest postponed by about the time its share takes, so other hosts keep being served.
 */
export function createDeliveryWorker(deps: DeliveryWorkerDeps): DeliveryWorker {
  const { db, clock, logger, events, metrics } = deps
  const random = deps.random ?? Math.random
  const concurrency = deps.concurrency ?? 256
  const perHost = deps.perHost ?? 32
  const pollMs = deps.pollMs ?? 500
  const name = deps.name ?? `worker-${newId().slice(0, 8)}`
  const claim = `${name}:${newId()}`
  const leaseMs = deps.timeoutMs + LEASE_MARGIN_MS
  /** Claimed and not yet recorded, overall and per host: one host never takes more than half. */
  const maxHeld = concurrency * 4
  const maxHeldPerHost = maxHeld / 2
  const pipeline = createAttemptPipeline({ signer: deps.signer, sender: deps.sender, clock, concurrency, perHost, signing: deps.signing ?? 16 })

  const held = new Set<string>()
  let settledWaiters: (() => void)[] = []
  let stopping = false
  let loop: Promise<void> | undefined
  let wakeUp: (() => void) | undefined
  let woken = false
  /** The last claim was full: more may be due as soon as there is room. */
  let backlog = false
  /**
   * Hosts whose share overflowed in a claim: claiming again right away would only fetch and postpone
   * more of their rows, so the next claim waits until one of them has worked off half its share (or
   * for the poll, a completion or a redelivery).
   */
  const saturated = new Set<string>()
  const pending: AttemptOutcome[] = []
  let writing: Promise<void> | undefined

  function wake(): void {
    woken = true
    wakeUp?.()
  }

  function sleep(ms: number): Promise<void> {
    if (woken) {
      woken = false
      return Promise.resolve()
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms)
      function done() {
        clearTimeout(timer)
        wakeUp = undefined
        woken = false
        resolve()
      }
      wakeUp = done
    })
  }

  /**
   * Claims as many due deliveries as there is room for. `full`: more may be due right now, so claim
   * again once there is room (at once when there is).
   */
  async function claimDue(): Promise<{ claimed: number; full: boolean }> {
    saturated.clear()
    const limit = Math.min(maxHeld - held.size, CLAIM_BATCH)
    // A claim costs about the same for 5 rows as for 100: with plenty in hand, wait for room.
    if (limit <= 0 || (limit < CLAIM_BATCH / 2 && held.size >= CLAIM_BATCH)) return { claimed: 0, full: true }
    const now = clock()
    const claimed = await claimDueDeliveries(db, { now, leaseUntil: new Date(now.getTime() + leaseMs), limit, claim })
    const overflow = new Map<string, ClaimedDelivery[]>()
    for (const delivery of claimed) {
      if (held.has(delivery.id)) continue // still ours (its lease was renewed late)
      const host = hostKey(delivery.tracking.callback)
      if (pipeline.load(host) < maxHeldPerHost) start(delivery, host)
      else if (overflow.has(host)) overflow.get(host)!.push(delivery)
      else overflow.set(host, [delivery])
    }
    for (const [host, deliveries] of overflow) {
      // Due again about when this host's share will have been worked off.
      const delayMs = Math.min(60_000, Math.max(100, (pipeline.meanMs(host) * pipeline.load(host)) / perHost))
      await postponeDeliveries(db, deliveries.map((d) => ({ id: d.id, claim })), new Date(now.getTime() + delayMs))
      saturated.add(host)
    }
    return { claimed: claimed.length, full: claimed.length === limit && overflow.size === 0 }
  }

  function start(delivery: ClaimedDelivery, host: string): void {
    held.add(delivery.id)
    pipeline.push(delivery, host, (result, startedAt) => {
      if (saturated.has(host) && pipeline.load(host) < maxHeldPerHost / 2) {
        saturated.delete(host)
        wake()
      }
      const classified = classifyAttempt(result, delivery.attempts, clock(), random)
      metrics.attempts.inc({ outcome: classified.outcome })
      metrics.duration.observe(result.durationMs / 1000)
      if (classified.next.state === 'dead') metrics.dead.inc()
      logAttempt(delivery, classified, result)
      pending.push({
        delivery, worker: name, startedAt, durationMs: result.durationMs, statusCode: result.statusCode,
        error: result.error, excerpt: result.excerpt, forwardTo: result.forwardTo, ...classified,
      })
      // Started on the next turn of the event loop, so every answer read in this one joins the batch.
      writing ??= new Promise((resolve) => setImmediate(resolve)).then(writeAll).finally(() => (writing = undefined))
    })
  }

  function logAttempt(delivery: ClaimedDelivery, classified: Pick<AttemptOutcome, 'outcome' | 'next'>, result: SendResult): void {
    if (classified.outcome === 'delivered' || classified.outcome === 'accepted') return
    const fields = {
      delivery: delivery.id, tracking: delivery.trackingId, attempt: delivery.attempts + 1, outcome: classified.outcome,
      host: hostKey(delivery.tracking.callback), status: result.statusCode, error: withoutCallbackPath(result.error, delivery.tracking.callback),
      ms: result.durationMs,
      next: classified.next.state === 'due' ? classified.next.at.toISOString() : classified.next.state,
    }
    if (classified.next.state === 'dead') logger.warn(fields, 'callback delivery dead')
    else logger.info(fields, 'callback attempt failed')
  }

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
      for (const outcome of batch) held.delete(outcome.delivery.id)
      if (backlog) wake()
      if (held.size === 0) {
        for (const resolve of settledWaiters) resolve()
        settledWaiters = []
      }
    }
  }

  /** Resolves once every claimed delivery is recorded. */
  const allSettled = (): Promise<void> =>
    held.size === 0 ? Promise.resolve() : new Promise((resolve) => void settledWaiters.push(resolve))

  async function run(): Promise<void> {
    // Renew the leases of what this worker still holds, so a long queue to a slow host is never taken over.
    const renew = setInterval(() => {
      if (held.size === 0) return
      const now = clock()
      // Only what is in hand: a delivery whose outcome could not be written must become due again.
      extendLeases(db, claim, [...held], new Date(now.getTime() + leaseMs)).catch((error: unknown) => logger.warn({ err: error }, 'renewing callback leases failed'))
    }, Math.max(1000, leaseMs / 3))
    renew.unref()
    try {
      while (!stopping) {
        let full = false
        try {
          full = (await claimDue()).full
        } catch (error) {
          if (stopping) break
          logger.warn({ err: error }, 'claiming callback deliveries failed')
        }
        backlog = full
        // Straight on only when the claim was full and a full claim fits; otherwise recorded attempts wake the loop.
        if (full && maxHeld - held.size >= CLAIM_BATCH) continue
        await sleep(pollMs)
      }
    } finally {
      clearInterval(renew)
    }
  }

  return {
    name,
    start() {
      loop ??= run()
    },
    wake,
    async runOnce() {
      const { claimed } = await claimDue()
      await allSettled()
      await writing
      return claimed
    },
    async stop() {
      stopping = true
      wake()
      await loop
      await allSettled()
      await writing
    },
  }
}

function hostKey(callback: string | null): string {
  try {
    return callback ? new URL(callback).host : ''
  } catch {
    return ''
  }
}

/**
 * An attempt's error for the log: the callback's host is operator information and stays, its path and
 * query (which may carry a token of the integrator's) never reach a log line.
 */
function withoutCallbackPath(error: string | null, callback: string | null): string | undefined {
  if (error === null) return undefined
  if (!callback) return error
  try {
    const url = new URL(callback)
    return error.replaceAll(callback, url.origin).replaceAll(url.href, url.origin)
  } catch {
    return error
  }
}
