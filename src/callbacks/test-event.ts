import type { Logger } from 'pino'
import type { Clock } from '../common/clock.ts'
import { asciiJson } from '../domain/ascii-json.ts'
import { newId } from '../store/ids.ts'
import { checkCallbackUrl } from './address-guard.ts'
import type { SendResult } from './sender.ts'
import type { CallbackSigner } from './signer.ts'
import type { WebhookSecretSource } from './webhook-secret-source.ts'
import { standardWebhookHeaders } from './webhook-signature.ts'

/**
 * One HTTP attempt to a url: the delivery worker's, through the per-endpoint limit
 * (PAYWATCH_ENDPOINT_CONCURRENCY), or a plain send where there is no worker (the CLI). The headers are
 * made when the attempt starts (the Standard Webhooks timestamp is the attempt's).
 */
export type TestAttempt = (
  accountId: string,
  url: string,
  body: string,
  headersAt: (startedAt: Date) => Record<string, string>,
) => Promise<SendResult>

/** The test event is under way (`answer` follows), or the url may not be called back (SSRF rules). */
export type TestEventOutcome = { kind: 'sent'; id: string; answer: Promise<SendResult> } | { kind: 'refused'; message: string }

/**
 * `POST /v2/endpoints/test` (docs/api.md §8): one POST of `{"event":"test","sent_at":…}` with header
 * `x-paywatch-event: test`, signed as callbacks without an integration are (the service key's
 * `x-signature`, the account's Standard Webhooks secret). Any url a callback may use, whether or not a
 * payment was delivered there yet; the SSRF rules of callbacks apply (refused before anything is sent,
 * unless PAYWATCH_ALLOW_PRIVATE_CALLBACKS). Not retried and not in the delivery log; its answer is logged.
 * Resolves once the event is signed and queued for its endpoint; `answer` follows.
 */
/** The test event's body (docs/api.md §8). */
export const testEventBody = (now: Date): string => asciiJson({ event: 'test', sent_at: now.toISOString() })

export function createTestEventSender(deps: {
  signer: CallbackSigner
  attempt: TestAttempt
  secrets: WebhookSecretSource
  clock: Clock
  logger: Logger
  allowPrivate: boolean
}) {
  return async function sendTestEvent(accountId: string, url: string): Promise<TestEventOutcome> {
    if (!deps.allowPrivate) {
      const refused = await checkCallbackUrl(url, deps.clock)
      if (refused) return { kind: 'refused', message: refused.shortMessage }
    }
    const id = newId()
    const body = testEventBody(deps.clock())
    const [signature, secrets] = await Promise.all([deps.signer.sign(body, null), deps.secrets.secretsFor(accountId, null)])
    const headersAt = (startedAt: Date) => ({
      'content-type': 'application/json',
      'x-signature': signature,
      'x-delivery-id': id,
      'x-paywatch-event': 'test',
      ...standardWebhookHeaders(secrets, id, startedAt, body),
    })
    const answer = deps.attempt(accountId, url, body, headersAt)
    void answer.then((result) => {
      deps.logger.info(
        {
          account: accountId,
          endpoint: new URL(url).origin,
          id,
          status: result.statusCode,
          error: result.error ?? undefined,
          ms: result.durationMs,
        },
        'test event sent',
      )
    })
    return { kind: 'sent', id, answer }
  }
}
