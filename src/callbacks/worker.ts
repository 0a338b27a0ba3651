import type { Logger } from 'pino'
import type { Clock } from '../common.ts'
import { asciiJson } from '../domain/ascii-json.ts'
import type { RandomSource } from '../domain/retry-schedule.ts'
import { fullRecord, type Tracking } from '../domain/tracking.ts'
import type { TrackingEvents } from '../payments/events.ts'
import type { Db } from '../store/database.ts'
import { claimDueDeliveries, postponeDeliveries, recordAttempts, type AttemptOutcome, type ClaimedDelivery } from '../store/deliveries.ts'
import { newId } from '../store/ids.ts'
import { classifyAttempt } from './classify.ts'
import type { CallbackMetrics } from './metrics.ts'
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
  /** Attempts in flight at once (all hosts). */
  concurrency?: number
  /** Attempts in flight at once to one host: a slow host never takes every slot. */
  perHost?: number
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
/** A claimed delivery whose host has every slot taken is given back, due again this much later. */
const BUSY_HOST_DELAY_MS = 1000
/** Time a worker may hold a delivery beyond the attempt timeout (signing queue, recording). */
const LEASE_MARGIN_MS = 30_000

/**
 * Delivers due callbacks: claims batches with the lease query, POSTs each signed body with bounded
 * concurrency (overall and per host), and records every attempt. Results are written in batches:
 * whatever finished while the previous write ran goes into the next transaction.
 */
export function createDeliveryWorker(deps: DeliveryWorkerDeps): DeliveryWorker {
  const { db, clock, logger, signer, sender, events, metrics } = deps
  const random = deps.random ?? Math.random
  const concurrency = deps.concurrency ?? 256
  const perHost = deps.perHost ?? 32
  const pollMs = deps.pollMs ?? 500
  const name = deps.name ?? `worker-${newId().slice(0, 8)}`

  let inFlight = 0
  const hostLoad = new Map<string, number>()
  const attempts = new Set<Promise<void>>()
  let stopping = false
  let loop: Promise<void> | undefined
  let wakeUp: (() => void) | undefined
  let woken = false
  /** The last claim was full: more may be due as soon as a slot frees. */
  let backlog = false

  const pending: { outcome: AttemptOutcome; done: () => void }[] = []
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

  /** Claims as many due deliveries as there are free slots; true when the claim was full. */
  async function claim(): Promise<{ claimed: number; full: boolean }> {
    const limit = Math.min(concurrency - inFlight, CLAIM_BATCH)
    if (limit <= 0) return { claimed: 0, full: true }
    const now = clock()
    const claimed = await claimDueDeliveries(db, {
      now, leaseUntil: new Date(now.getTime() + deps.timeoutMs + LEASE_MARGIN_MS), limit, claim: `${name}:${newId()}`,
    })
    const busy: ClaimedDelivery[] = []
    for (const delivery of claimed) {
      const host = hostKey(delivery.tracking.callback)
      if ((hostLoad.get(host) ?? 0) >= perHost) busy.push(delivery)
      else startAttempt(delivery, host)
    }
    if (busy.length > 0) await postponeDeliveries(db, busy, new Date(now.getTime() + BUSY_HOST_DELAY_MS))
    return { claimed: claimed.length, full: claimed.length === limit }
  }

  function startAttempt(delivery: ClaimedDelivery, host: string): void {
    inFlight++
    hostLoad.set(host, (hostLoad.get(host) ?? 0) + 1)
    const task = attempt(delivery)
      .catch((error: unknown) => logger.error({ err: error, delivery: delivery.id }, 'callback attempt could not be recorded'))
      .finally(() => {
        inFlight--
        const load = (hostLoad.get(host) ?? 1) - 1
        if (load === 0) hostLoad.delete(host)
        else hostLoad.set(host, load)
        attempts.delete(task)
        if (backlog) wake()
      })
    attempts.add(task)
  }

  async function attempt(delivery: ClaimedDelivery): Promise<void> {
    const { tracking } = delivery
    const startedAt = clock()
    let result: SendResult
    if (!tracking.callback) {
      result = { durationMs: 0, statusCode: null, error: 'the tracking has no callback URL', refused: true, excerpt: null, forwardTo: null }
    } else {
      try {
        const body = asciiJson(fullRecord(tracking))
        const signature = await signer.sign(body, tracking.integrationId)
        result = await sender.send(tracking.callback, body, {
          'content-type': 'application/json', 'x-signature': signature, 'x-delivery-id': delivery.id,
        })
      } catch (error) {
        result = { durationMs: 0, statusCode: null, error: `not sent: ${(error as Error).message}`, refused: false, excerpt: null, forwardTo: null }
      }
    }
    const classified = classifyAttempt(result, delivery.attempts, clock(), random)
    metrics.attempts.inc({ outcome: classified.outcome })
    metrics.duration.observe(result.durationMs / 1000)
    if (classified.next.state === 'dead') metrics.dead.inc()
    logAttempt(delivery, classified, result)
    await record({
      delivery, worker: name, startedAt, durationMs: result.durationMs, statusCode: result.statusCode,
      error: result.error, excerpt: result.excerpt, forwardTo: result.forwardTo, ...classified,
    })
  }

  function logAttempt(delivery: ClaimedDelivery, classified: Pick<AttemptOutcome, 'outcome' | 'next'>, result: SendResult): void {
    const fields = {
      delivery: delivery.id, tracking: delivery.trackingId, attempt: delivery.attempts + 1, outcome: classified.outcome,
      status: result.statusCode, error: result.error ?? undefined, ms: result.durationMs,
      next: classified.next.state === 'due' ? classified.next.at.toISOString() : classified.next.state,
    }
    if (classified.next.state === 'dead') logger.warn(fields, 'callback delivery dead')
    else if (classified.outcome === 'failed') logger.info(fields, 'callback attempt failed')
    else logger.debug(fields, 'callback delivered')
  }

  /** Queues an attempt for the next write; resolves once it is written. */
  function record(outcome: AttemptOutcome): Promise<void> {
    return new Promise((done) => {
      pending.push({ outcome, done })
      writing ??= writeAll().finally(() => (writing = undefined))
    })
  }

  async function writeAll(): Promise<void> {
    while (pending.length > 0) {
      const batch = pending.splice(0, 200)
      try {
        const released = await recordAttempts(db, batch.map((item) => item.outcome), clock())
        for (const tracking of released) events.emit('released', tracking as Tracking)
      } catch (error) {
        // The deliveries stay leased and become due again when the lease ends: at least once.
        logger.error({ err: error, count: batch.length }, 'callback attempts could not be recorded; they will be retried')
      }
      for (const item of batch) item.done()
    }
  }

  async function run(): Promise<void> {
    while (!stopping) {
      let full = false
      try {
        full = (await claim()).full
      } catch (error) {
        if (stopping) break
        logger.warn({ err: error }, 'claiming callback deliveries failed')
      }
      backlog = full
      if (full && inFlight < concurrency) continue
      await sleep(pollMs)
    }
  }

  return {
    name,
    start() {
      loop ??= run()
    },
    wake,
    async runOnce() {
      const { claimed } = await claim()
      await Promise.all([...attempts])
      await writing
      return claimed
    },
    async stop() {
      stopping = true
      wake()
      await loop
      await Promise.all([...attempts])
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
