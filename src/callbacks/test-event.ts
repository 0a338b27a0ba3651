import type { Logger } from 'pino'
import type { Clock } from '../common/clock.ts'
import { asciiJson } from '../domain/ascii-json.ts'
import { newId } from '../store/ids.ts'
import type { CallbackSender, SendResult } from './sender.ts'
import type { CallbackSigner } from './signer.ts'
import type { WebhookSecretSource } from './webhook-secret-source.ts'
import { standardWebhookHeaders } from './webhook-signature.ts'

/**
 * `POST /v2/endpoints/test` (docs/api.md §8): one POST of `{"event":"test","sent_at":…}` with header
 * `x-paywatch-event: test`, signed as callbacks without an integration are (the service key's
 * `x-signature`, the account's Standard Webhooks secret). Not retried and not in the delivery log; its
 * answer is logged. Resolves once the body is signed and the POST under way; `answer` follows.
 */
/** The test event's body (docs/api.md §8). */
export const testEventBody = (now: Date): string => asciiJson({ event: 'test', sent_at: now.toISOString() })

export function createTestEventSender(deps: {
  signer: CallbackSigner
  sender: CallbackSender
  secrets: WebhookSecretSource
  clock: Clock
  logger: Logger
}) {
  return async function sendTestEvent(accountId: string, url: string): Promise<{ id: string; answer: Promise<SendResult> }> {
    const id = newId()
    const now = deps.clock()
    const body = testEventBody(now)
    const [signature, secrets] = await Promise.all([deps.signer.sign(body, null), deps.secrets.secretsFor(accountId, null)])
    const headers = {
      'content-type': 'application/json',
      'x-signature': signature,
      'x-delivery-id': id,
      'x-paywatch-event': 'test',
      ...standardWebhookHeaders(secrets, id, now, body),
    }
    const answer = deps.sender.send(url, body, headers)
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
    return { id, answer }
  }
}
