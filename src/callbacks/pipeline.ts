import { NonRetryableError, PaywatchError, RetryableError } from '../common/errors.ts'
import { asciiJson } from '../domain/ascii-json.ts'
import { fullRecord } from '../domain/records.ts'
import type { ClaimedDelivery } from '../store/deliveries.ts'
import type { CallbackSender, SendResult } from './sender.ts'
import type { CallbackSigner } from './signer.ts'
import type { WebhookSecretSource } from './webhook-secret-source.ts'
import { standardWebhookHeaders } from './webhook-signature.ts'
import type { WebhookSecretSet } from '../store/webhook-secrets.ts'

/**
 * The stages a claimed delivery goes through inside one worker: signing (a bounded number at once on
 * the libuv pool, so API requests that sign a record are not queued behind a whole batch), then the
 * HTTP attempt with at most `perHost` in flight to one host and `concurrency` overall, so one slow
 * endpoint holds only its own slots.
 */
export interface AttemptPipeline {
  /** Queues a claimed delivery; `done` receives the attempt's result (with its start time). */
  push(delivery: ClaimedDelivery, host: string, done: (result: SendResult, startedAt: Date) => void): void
  /**
   * One POST that is no delivery (a test event), counted against the same per-host limit: it waits
   * for a slot of `host` like a delivery does. After `close` it resolves as not sent.
   */
  send(host: string, url: string, body: string, headersAt: (startedAt: Date) => Record<string, string>): Promise<SendResult>
  /**
   * Resolves once every delivery pushed so far has its request on its way (handed to the sender) or will
   * not be sent: the chain engine waits for its block's callbacks to leave before its next reads
   * (chain-processor.ts).
   */
  started(): Promise<void>
  /** Deliveries of this host signed or being signed and not yet answered. */
  load(host: string): number
  /** Mean attempt duration to this host (ms), for postponing what exceeds its share. */
  meanMs(host: string): number
  /** Requests on their way and not answered yet (every host). */
  unanswered(): number
  /**
   * Stops starting attempts: every delivery not yet sent (queued, or still being signed) goes to
   * `cancelled` instead of its `done`, so a stop never waits behind a slow endpoint's queue.
   */
  close(cancelled: (delivery: ClaimedDelivery) => void): void
}

interface Job {
  delivery: ClaimedDelivery
  host: string
  done: (result: SendResult, startedAt: Date) => void
  body?: string
  headers?: Record<string, string>
  secrets?: WebhookSecretSet
  /** Its request is on its way, or it will not be sent (counted once in `starting`). */
  left?: boolean
}

/** An attempt ready to go out (signed): what it sends, and what becomes of its answer. */
interface ReadyAttempt {
  url: string
  body: string
  headersAt(startedAt: Date): Record<string, string>
  settle(result: SendResult, startedAt: Date): void
  /** Runs right before the request goes out (a delivery writes that its attempt started). */
  beforeSend?(startedAt: Date): Promise<void> | undefined
  /** The pipeline closed before it was sent. */
  drop(): void
  /** Its request is handed to the sender now. */
  started?(): void
}

interface HostState {
  load: number
  inFlight: number
  ready: ReadyAttempt[]
  meanMs: number
}

export function createAttemptPipeline(options: {
  signer: CallbackSigner
  sender: CallbackSender
  /** Standard Webhooks secrets (docs/api.md §8); without, only `x-signature` is sent (benchmarks compare). */
  secrets?: WebhookSecretSource
  clock: () => Date
  concurrency: number
  perHost: number
  signing: number
  /**
   * Waited for right before an attempt's request goes out (its start is recorded: an attempt never
   * started spends no retry after a crash; sending-marks.ts). Absent, or answering undefined: sent at once.
   */
  beforeSend?: (delivery: ClaimedDelivery, startedAt: Date) => Promise<void> | undefined
  /** Told when a signed delivery cannot go at once: it waits for a slot of its host (sending-marks.ts). */
  waiting?: (delivery: ClaimedDelivery) => void
}): AttemptPipeline {
  const { signer, sender, clock } = options
  let cancel: ((delivery: ClaimedDelivery) => void) | undefined
  const toSign: Job[] = []
  let signing = 0
  let inFlight = 0
  const hosts = new Map<string, HostState>()
  // Hosts with signed deliveries held back only by the overall limit: the ones to serve when a slot frees
  // (not every host in hand, which made each answer cost O(hosts)).
  const waiting = new Set<string>()
  const hostState = (host: string): HostState => {
    let state = hosts.get(host)
    if (!state) hosts.set(host, (state = { load: 0, inFlight: 0, ready: [], meanMs: 50 }))
    return state
  }

  /** Deliveries pushed whose request has not left yet, and who waits for none to be left. */
  let starting = 0
  const whenStarted: (() => void)[] = []
  const leave = (job: Job) => {
    if (job.left) return
    job.left = true
    starting--
    if (starting === 0) for (const resolve of whenStarted.splice(0)) resolve()
  }

  const fail = (job: Job, failure: PaywatchError) => {
    leave(job)
    finish(job, { durationMs: 0, statusCode: null, error: failure.shortMessage, failure, excerpt: null, forwardTo: null }, clock())
  }

  function finish(job: Job, result: SendResult, startedAt: Date): void {
    const state = hostState(job.host)
    state.load--
    if (state.load === 0 && state.inFlight === 0) hosts.delete(job.host)
    job.done(result, startedAt)
  }

  function pumpSigning(): void {
    while (signing < options.signing && toSign.length > 0) {
      const job = toSign.shift()!
      const { tracking } = job.delivery
      if (!tracking.callback) {
        fail(job, new CallbackNotSentError('the tracking has no callback URL'))
        continue
      }
      signing++
      const body = bodyOf(job.delivery)
      const secrets = options.secrets?.secretsFor(tracking.accountId, tracking.integrationId)
      // Cached: a completion made this very signature while the delivery was being claimed (callbacks/index.ts).
      Promise.all([signer.signCached(body, tracking.integrationId), secrets])
        .then(
          ([signature, secretSet]) => {
            job.body = body
            job.secrets = secretSet
            job.headers = { 'content-type': 'application/json', 'x-signature': signature, 'x-delivery-id': job.delivery.id }
            if (job.delivery.event) job.headers['x-paywatch-event'] = job.delivery.event
            if (cancel) return drop(job)
            hostState(job.host).ready.push(readyDelivery(job))
            pumpHttp(job.host)
            if (!job.left) options.waiting?.(job.delivery)
          },
          // Retried on the schedule, as before: a key that fails now may be fixed before the next attempt.
          (error: Error) => fail(job, new RetryableError(`not sent: signing failed: ${error.message}`, { cause: error })),
        )
        .finally(() => {
          signing--
          pumpSigning()
        })
    }
  }

  /** A job that will not be attempted (the pipeline closed): no longer in this host's load. */
  function drop(job: Job): void {
    leave(job)
    unload(job.host)
    cancel!(job.delivery)
  }

  function unload(host: string): void {
    const state = hostState(host)
    state.load--
    if (state.load === 0 && state.inFlight === 0) hosts.delete(host)
  }

  const readyDelivery = (job: Job): ReadyAttempt => ({
    url: job.delivery.tracking.callback!,
    body: job.body!,
    // The Standard Webhooks timestamp is this attempt's: signed now, not when the RSA signature was made.
    headersAt: (startedAt) =>
      job.secrets ? { ...job.headers!, ...standardWebhookHeaders(job.secrets, job.delivery.id, startedAt, job.body!) } : job.headers!,
    settle: (result, startedAt) => finish(job, result, startedAt),
    beforeSend: (startedAt) => options.beforeSend?.(job.delivery, startedAt),
    drop: () => drop(job),
    started: () => leave(job),
  })

  function pumpHttp(host: string): void {
    if (cancel) return
    const state = hostState(host)
    waiting.delete(host)
    while (state.inFlight < options.perHost && inFlight < options.concurrency && state.ready.length > 0) {
      const attempt = state.ready.shift()!
      state.inFlight++
      inFlight++
      const startedAt = clock()
      const headers = attempt.headersAt(startedAt)
      // The attempt's start is on record before its request leaves (a crash after it is an interrupted attempt).
      const marked = attempt.beforeSend?.(startedAt)
      const go = () => {
        attempt.started?.()
        return sender.send(attempt.url, attempt.body, headers)
      }
      const sent = marked ? marked.then(go) : go()
      sent.then((result) => {
        state.inFlight--
        inFlight--
        // An exponentially weighted mean: recent answers count most.
        state.meanMs = state.meanMs * 0.8 + result.durationMs * 0.2
        attempt.settle(result, startedAt)
        pumpHttp(host)
        for (const other of waiting) {
          if (inFlight >= options.concurrency) break
          pumpHttp(other)
        }
      })
    }
    if (state.ready.length > 0 && state.inFlight < options.perHost) waiting.add(host)
  }

  return {
    push(delivery, host, done) {
      starting++
      hostState(host).load++
      toSign.push({ delivery, host, done })
      pumpSigning()
    },
    send(host, url, body, headersAt) {
      return new Promise((resolve) => {
        const notSent = (): SendResult => ({
          durationMs: 0,
          statusCode: null,
          error: 'not sent: the service is stopping',
          excerpt: null,
          forwardTo: null,
        })
        if (cancel) return resolve(notSent())
        hostState(host).load++
        hostState(host).ready.push({
          url,
          body,
          headersAt,
          settle(result) {
            unload(host)
            resolve(result)
          },
          drop() {
            unload(host)
            resolve(notSent())
          },
        })
        pumpHttp(host)
      })
    },
    started: () => (starting === 0 ? Promise.resolve() : new Promise((resolve) => whenStarted.push(resolve))),
    load: (host) => hosts.get(host)?.load ?? 0,
    meanMs: (host) => hosts.get(host)?.meanMs ?? 50,
    unanswered: () => inFlight,
    close(cancelled) {
      cancel = cancelled
      for (const job of toSign.splice(0)) drop(job)
      for (const state of [...hosts.values()]) for (const attempt of state.ready.splice(0)) attempt.drop()
    },
  }
}

/** A delivery that cannot be sent at all (its tracking has no callback URL): dead at once. */
class CallbackNotSentError extends NonRetryableError {
  override name = 'CallbackNotSentError'
  override readonly code = 'CALLBACK_NOT_SENT'
}

/** The payment record (docs/api.md §4), or an event wrapping it (docs/api.md §8). */
export function bodyOf(delivery: Pick<ClaimedDelivery, 'tracking' | 'event'>): string {
  const record = fullRecord(delivery.tracking)
  return asciiJson(delivery.event ? { event: delivery.event, payment: record } : record)
}

/** The exact bytes a callback of `tracking` sends (and signs). */
export function callbackBody(tracking: ClaimedDelivery['tracking'], event: string | null = null): string {
  return bodyOf({ tracking, event })
}
