import type { Logger } from 'pino'
import type { Clock } from '../common/clock.ts'
import { endpointUrlOf } from '../domain/endpoint-url.ts'
import type { RandomSource } from '../domain/retry-schedule.ts'
import type { TrackingEvents } from '../common/tracking-events.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { newId } from '../store/ids.ts'
import { postponeDeliveries, unmarkSending, type DeliveryHandoff } from '../store/deliveries.ts'
import { attemptOutcome } from './attempt-outcome.ts'
import { CLAIM_BATCH, createDueClaimer } from './claim-due.ts'
import { createHeldDeliveries } from './held-deliveries.ts'
import { renewLeases } from './lease-renewal.ts'
import type { CallbackMetrics } from './metrics.ts'
import { createOutcomeRecorder } from './outcome-recorder.ts'
import { createAttemptPipeline } from './pipeline.ts'
import { createSendingMarks } from './sending-marks.ts'
import type { CallbackSender, SendResult } from './sender.ts'
import type { CallbackSigner } from './signer.ts'
import { createWakeSignal } from '../common/wake-signal.ts'
import { createEndpointRegistry } from './endpoint-registry.ts'
import type { WebhookSecretSource } from './webhook-secret-source.ts'
import { endpointKey } from '../store/webhook-endpoints.ts'

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
  /** Standard Webhooks secrets (docs/api.md §8); without, only `x-signature` is sent. */
  secrets?: WebhookSecretSource
  /** An endpoint answering nothing but failures this long is disabled (default 5 days). */
  disableAfterMs?: number
  /** How long the disabled endpoints read are used before reading them again (cache-freshness.ts). */
  endpointsFreshMs?: number
}

export interface DeliveryWorker {
  readonly name: string
  /** Starts the claim loop. */
  start(): void
  /** A delivery may be due now (a completion, a redelivery). */
  wake(): void
  /** Takes the deliveries a verdict's transaction inserts under this worker's lease (store/deliveries.ts). */
  readonly handoff: DeliveryHandoff
  /** Claims what is due now, makes those attempts and records them; returns how many were claimed. For tests and tools. */
  runOnce(): Promise<number>
  /** Stops claiming and waits for the attempts in flight to be recorded. */
  stop(): Promise<void>
  /** An endpoint was enabled (or disabled) elsewhere: read the disabled endpoints again, and claim. */
  endpointsChanged(): void
  /**
   * One POST that is no delivery (a test event) to `url`, within the account's endpoint's limit of
   * attempts at once (PAYWATCH_ENDPOINT_CONCURRENCY), shared with its deliveries.
   */
  sendOne(accountId: string, url: string, body: string, headersAt: (startedAt: Date) => Record<string, string>): Promise<SendResult>
}

/** Time a worker holds a claimed delivery beyond the attempt timeout; renewed while it still holds it. */
const LEASE_MARGIN_MS = 30_000

/**
 * Delivers due callbacks: claims batches (lease query, SKIP LOCKED; claim-due.ts), signs and POSTs each
 * through the attempt pipeline (pipeline.ts), and records every attempt in batches (outcome-recorder.ts),
 * renewing the leases of what it holds meanwhile (lease-renewal.ts). This module is the claim loop
 * that ties them together.
 */
export function createDeliveryWorker(deps: DeliveryWorkerDeps): DeliveryWorker {
  const { db, clock, logger } = deps
  const concurrency = deps.concurrency ?? 256
  const perHost = deps.perHost ?? 32
  const pollMs = deps.pollMs ?? 500
  const name = deps.name ?? `worker-${newId().slice(0, 8)}`
  const claim = `${name}:${newId()}`
  const leaseMs = deps.timeoutMs + LEASE_MARGIN_MS
  /** Claimed and not yet recorded, overall and per host: one host never takes more than half. */
  const maxHeld = concurrency * 4
  const endpoints = createEndpointRegistry(db, deps.endpointsFreshMs)
  const marks = createSendingMarks({ db, claim, logger })
  const pipeline = createAttemptPipeline({
    signer: deps.signer,
    sender: deps.sender,
    secrets: deps.secrets,
    clock,
    concurrency,
    perHost,
    signing: deps.signing ?? 16,
    beforeSend: (delivery, at) => marks.beforeSend(delivery, at),
    waiting: (delivery) => marks.waiting(delivery),
  })
  const outcomes = { clock, random: deps.random ?? Math.random, metrics: deps.metrics, logger, worker: name }

  const signal = createWakeSignal()
  const held = createHeldDeliveries()
  /** The last claim was full: more may be due as soon as there is room. */
  let backlog = false
  const recorder = createOutcomeRecorder({
    db,
    clock,
    logger,
    events: deps.events,
    unanswered: () => pipeline.unanswered(),
    onWritten(batch) {
      held.release(batch.map((outcome) => outcome.delivery.id))
      if (backlog) signal.wake()
    },
    endpointHealth: {
      disableAfterMs: deps.disableAfterMs ?? 432_000_000,
      onDisabled(disabled) {
        for (const endpoint of disabled) {
          endpoints.markDisabled(endpointKey(endpoint.accountId, endpoint.url))
          deps.metrics.endpointsDisabled.inc({ reason: endpoint.gone ? 'gone' : 'failing' })
          logger.warn({ account: endpoint.accountId, endpoint: endpoint.url, reason: endpoint.reason }, 'callback endpoint disabled')
        }
      },
    },
  })
  const claimer = createDueClaimer({
    db,
    clock,
    claim,
    leaseMs,
    held,
    pipeline,
    maxHeld,
    // One endpoint never holds more than half, nor more than a few rounds of its own limit: what a dead
    // endpoint holds waits in this worker's queue (and a stop cancels it).
    maxHeldPerHost: Math.min(maxHeld / 2, perHost * 8),
    perHost,
    endpoints,
    dispatch(delivery, host) {
      held.add(delivery.id)
      pipeline.push(delivery, host, (result, startedAt) => {
        if (claimer.relieved(host)) signal.wake()
        recorder.add(attemptOutcome(outcomes, delivery, result, startedAt))
      })
    },
  })

  let stopping = false
  let loop: Promise<void> | undefined
  const handoff: DeliveryHandoff = {
    // Only while the claim loop runs and has room for a block's worth: else the rows wait for a claim as before.
    lease: (now) =>
      loop && !stopping && maxHeld - held.size >= CLAIM_BATCH ? { claim, until: new Date(now.getTime() + leaseMs) } : undefined,
    async take(deliveries) {
      if (deliveries.length === 0) return
      if (stopping) {
        // Stopped since the lease was given: due again now, for any worker.
        void postponeDeliveries(
          db,
          deliveries.map((d) => ({ id: d.id, claim })),
          clock(),
        ).catch(() => {})
        return
      }
      try {
        await claimer.place(deliveries, clock())
      } catch (error) {
        // Not attempted: the rows are due again when their lease ends, without the start written with them.
        logger.warn({ err: error, deliveries: deliveries.length }, 'taking callback deliveries from their verdict failed')
        const unsent = deliveries.filter((delivery) => !held.has(delivery.id)).map((delivery) => delivery.id)
        void unmarkSending(db, claim, unsent).catch(() => {})
        return
      }
      await pipeline.started()
    },
  }
  async function run(): Promise<void> {
    const stopRenewing = renewLeases({ db, clock, logger, claim, leaseMs, held })
    try {
      while (!stopping) {
        let full = false
        try {
          full = (await claimer.claimDue()).full
        } catch (error) {
          if (stopping) break
          logger.warn({ err: error }, 'claiming callback deliveries failed')
        }
        backlog = full
        // Straight on only when the claim was full and a full claim fits; otherwise recorded attempts wake the loop.
        if (full && maxHeld - held.size >= CLAIM_BATCH) continue
        await signal.sleep(pollMs)
      }
    } finally {
      stopRenewing()
    }
  }

  return {
    name,
    start() {
      loop ??= run()
    },
    wake: () => signal.wake(),
    handoff,
    endpointsChanged() {
      endpoints.invalidate()
      signal.wake()
    },
    sendOne: (accountId, url, body, headersAt) => pipeline.send(endpointKey(accountId, endpointUrlOf(url) ?? ''), url, body, headersAt),
    async runOnce() {
      const { claimed } = await claimer.claimDue()
      await held.settled()
      await recorder.flushed()
      return claimed
    },
    async stop() {
      stopping = true
      signal.wake()
      await loop
      // Deliveries not yet attempted are given back, due now for any other worker (or the next start).
      const cancelled: { id: string; claim: string }[] = []
      pipeline.close((delivery) => {
        cancelled.push({ id: delivery.id, claim })
        queueMicrotask(() => {
          if (cancelled.length === 0) return
          const batch = cancelled.splice(0)
          void postponeDeliveries(db, batch, clock())
            .catch((error) => logger.warn({ err: error }, 'giving back unattempted callback deliveries failed; their leases end'))
            .finally(() => held.release(batch.map((item) => item.id)))
        })
      })
      await held.settled()
      await recorder.flushed()
    },
  }
}
