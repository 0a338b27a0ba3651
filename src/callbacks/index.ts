import type { Common } from '../common/common.ts'
import type { DecorateRecord, Subsystem } from '../common/subsystem.ts'
import type { RandomSource } from '../domain/retry-schedule.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { ReferenceCheck } from '../domain/reference-check.ts'
import type { TrackingEvents } from '../common/tracking-events.ts'
import type { DatabaseHandle } from '../store/infrastructure/database.ts'
import type { DeliveryHandoff } from '../store/deliveries.ts'
import { findIntegration } from '../store/integrations.ts'
import { sealStoredSigningKeys, sealStoredWebhookSecrets } from '../store/stored-key-sealing.ts'
import { checkCallbackUrl } from './address-guard.ts'
import { createCallbackMetrics } from './metrics.ts'
import { createCallbackSender } from './sender.ts'
import { createCallbackSigner, type CallbackSigner } from './signer.ts'
import { createDeliveryWorker, type DeliveryWorker } from './worker.ts'
import { callbackBody } from './pipeline.ts'
import { createTestEventSender, type TestEventOutcome } from './test-event.ts'
import { followReversalEvents } from './reversal-events.ts'
import { createWebhookSecretSource, type WebhookSecretSource } from './webhook-secret-source.ts'
import { claimPollMsFor, freshMsFor } from './cache-freshness.ts'

export interface CallbacksOptions {
  random?: RandomSource
  /** false: callbacks carry only `x-signature`, no Standard Webhooks headers (benchmarks compare the two). */
  standardWebhooks?: boolean
  pollMs?: number
  concurrency?: number
  perHost?: number
  signing?: number
}

/**
 * The callbacks subsystem (its routes are added in http/routes/callback-routes.ts, as http is a layer
 * above), with the signer and the worker it is built of, for tests and tools.
 */
export interface Callbacks extends Subsystem {
  signer: CallbackSigner
  worker: DeliveryWorker
  /** For the chain engine: its verdicts' deliveries go to this node's worker as they commit. */
  handoff: DeliveryHandoff
  /** Standard Webhooks secrets; `forget()` after a rotation. */
  secrets: WebhookSecretSource
  /** Sends one signed test event to a callback url (docs/api.md §8), through its endpoint's limit. */
  sendTestEvent(accountId: string, url: string): Promise<TestEventOutcome>
  referenceChecks: ReferenceCheck[]
  /** Signs record responses (`x-signature`). */
  decorateRecord: DecorateRecord
  /** Starts the delivery worker. */
  start(): Promise<void>
  /** Stops claiming and waits for the attempts in flight to be recorded. */
  stop(): Promise<void>
}

/** Completions signed ahead of their claim at once, at most (beyond: a burst, left to the pipeline). */
const SIGN_AHEAD_AT_ONCE = 32

/**
 * Signed callbacks (docs/api.md §4): the signing keys, the delivery worker and the create-time
 * checks of what a tracking's callback and integration refer to.
 */
export async function createCallbacks(
  common: Common,
  database: DatabaseHandle,
  events: TrackingEvents,
  options: CallbacksOptions = {},
): Promise<Callbacks> {
  const { config, clock, logger } = common
  const db = database.db
  const sealed = await sealStoredSigningKeys(db, config.secretsKey)
  if (sealed > 0) logger.info({ count: sealed }, 'stored signing keys sealed')
  const sealedSecrets = await sealStoredWebhookSecrets(db, config.secretsKey)
  if (sealedSecrets > 0) logger.info({ count: sealedSecrets }, 'stored webhook secrets sealed')
  const signer = await createCallbackSigner(db, config.signingKey, config.secretsKey)
  const sender = createCallbackSender({ timeoutMs: config.callbackTimeoutSec * 1000, allowPrivate: config.allowPrivateCallbacks })
  common.shutdown.add('callback-connections', () => sender.close())
  // How long the worker keeps the webhook secrets and disabled endpoints it read (cache-freshness.ts).
  const freshMs = freshMsFor(database.kind)
  const secrets = createWebhookSecretSource(db, clock, config.secretsKey, freshMs)
  const metrics = createCallbackMetrics(common.metrics.registry, db, clock)
  const worker = createDeliveryWorker({
    db,
    clock,
    logger: logger.child({ subsystem: 'callbacks' }),
    signer,
    sender,
    events,
    metrics,
    timeoutMs: config.callbackTimeoutSec * 1000,
    secrets: options.standardWebhooks === false ? undefined : secrets,
    perHost: config.endpointConcurrency,
    disableAfterMs: config.endpointDisableAfterSec * 1000,
    endpointsFreshMs: freshMs,
    pollMs: claimPollMsFor(database.kind),
    ...options,
  })

  const integrationCheck: ReferenceCheck = async (accountId, request) => {
    if (request.integrationId === null) return undefined
    if (await findIntegration(db, request.integrationId, accountId)) return undefined
    const path = request.payload?.integration === request.integrationId ? 'payload.integration' : 'integration_id'
    return { kind: 'invalid', errors: [{ path, message: 'is not an integration of this account' }] }
  }
  const callbackCheck: ReferenceCheck = async (_accountId, request) => {
    if (config.allowPrivateCallbacks || request.callback === null) return undefined
    const refused = await checkCallbackUrl(request.callback, clock)
    return refused && { kind: 'invalid', errors: [{ path: 'callback', message: refused.shortMessage }] }
  }

  let stopFollowing: (() => void) | undefined
  /** Signatures made ahead of their claim and not yet done: a burst of completions is signed by the pipeline alone. */
  let signingAhead = 0
  /**
   * Signs a completion's body ahead of its claim, and reads its webhook secrets: first from the verdict
   * about to be written (`completing`: the signature is made while the transaction runs), then from the
   * written one (the same body: the signature in the making is shared), so that the pipeline finds both ready.
   */
  const signAhead = (tracking: Tracking) => {
    if (!tracking.callback || signingAhead >= SIGN_AHEAD_AT_ONCE) return
    signingAhead++
    void signer
      .signCached(callbackBody(tracking), tracking.integrationId)
      .catch(() => {})
      .finally(() => signingAhead--)
    if (options.standardWebhooks !== false) void secrets.secretsFor(tracking.accountId, tracking.integrationId).catch(() => {})
  }
  /** Trackings whose delivery the worker took from the verdict's writer: no claim to wake for. */
  const handedOff = new Set<string>()
  const handoff: DeliveryHandoff = {
    lease: (now) => worker.handoff.lease(now),
    take(deliveries) {
      for (const delivery of deliveries) handedOff.add(delivery.trackingId)
      return worker.handoff.take(deliveries)
    },
  }
  const wakeOnCompletion = (tracking: Tracking) => {
    if (!tracking.callback) return
    if (!handedOff.delete(tracking.id)) worker.wake()
    signAhead(tracking)
  }

  return {
    name: 'callback-delivery',
    signer,
    worker,
    handoff,
    secrets,
    sendTestEvent: createTestEventSender({
      signer,
      attempt: worker.sendOne,
      secrets,
      clock,
      logger: logger.child({ subsystem: 'callbacks' }),
      allowPrivate: config.allowPrivateCallbacks,
    }),
    referenceChecks: [integrationCheck, callbackCheck],
    async decorateRecord(tracking, body, reply) {
      reply.header('x-signature', await signer.signCached(body, tracking.integrationId))
    },
    async start() {
      // The embedded database belongs to this one process: a lease left by a previous run is stale. It
      // ends now; the claim logs the attempt that run cut off and makes it again.
      if (database.kind === 'pglite') {
        const now = clock()
        await db
          .updateTable('deliveries')
          .set({ locked_until: now, next_attempt_at: now })
          .where('state', '=', 'due')
          .where('claimed_by', 'is not', null)
          .execute()
      }
      events.on('completing', signAhead)
      events.on('completed', wakeOnCompletion)
      stopFollowing = followReversalEvents(events, metrics, () => worker.wake())
      worker.start()
    },
    async stop() {
      events.off('completing', signAhead)
      events.off('completed', wakeOnCompletion)
      stopFollowing?.()
      await worker.stop()
    },
  }
}
