// What every example receiver does with a callback, whatever the framework (docs/api.md §4):
// verify it, deduplicate on its delivery id, then answer 200 (the user is released at once and sent to
// `forward_to`) or 202 (accepted; the user is released later with POST /v2/payments/release).
import { createClient, verifyCallback, verifyWebhook, type PaymentRecord } from '@paywatch/client'

export interface ReceiverOptions {
  /** Where Paywatch runs, e.g. http://127.0.0.1:3000. */
  paywatchUrl: string
  /** The account's API key: releases after a 202 go through the API. */
  apiKey: string
  /** The `whsec_…` secret of the integration or account: then `webhook-signature` is checked too. */
  webhookSecret?: string
  /** 'now': answer 200 and release; 'later': answer 202 and release once your own work is done. */
  decide?: (record: PaymentRecord) => 'now' | 'later'
  /** Where the user goes after the payment (the 200 answer's `forward_to`). */
  forwardTo?: (record: PaymentRecord) => string | null
  /** Called once per verified delivery (your business logic: mark the order paid, …). */
  onPayment?: (record: PaymentRecord, deliveryId: string) => void | Promise<void>
  /** Where a one-line reason goes when a callback is rejected (a 4xx answer). */
  log?: (line: string) => void
  /** Now, in milliseconds (tests). */
  now?: () => number
}

/** How long after reading the public key a failed signature does not make us read it again. */
const REREAD_MS = 5_000

export interface CallbackAnswer {
  status: number
  body?: string
}

type Headers = Record<string, string | string[] | undefined>

export function createCallbackHandler(
  options: ReceiverOptions,
): (request: { body: Uint8Array | string; headers: Headers }) => Promise<CallbackAnswer> {
  const client = createClient({ baseUrl: options.paywatchUrl, apiKey: options.apiKey })
  const now = options.now ?? Date.now
  const reject = (status: number, reason: string, deliveryId?: string): CallbackAnswer => {
    options.log?.(`rejected callback${deliveryId ? ` ${deliveryId}` : ''} with ${status}: ${reason}`)
    return { status, body: reason }
  }
  let publicKey: Promise<string> | undefined
  let fetchedAt = Number.NEGATIVE_INFINITY
  // Fetched once and kept: the key changes only when the operator replaces it (docs/operations.md), or
  // when a `paywatch dev` was started on a fresh data folder.
  const fetchPublicKey = () => {
    if (!publicKey) {
      fetchedAt = now()
      publicKey = fetch(`${options.paywatchUrl}/v2/public-key`).then((response) => {
        if (!response.ok) throw new Error(`GET /v2/public-key answered ${response.status}`)
        return response.text()
      })
      publicKey.catch(() => (publicKey = undefined))
    }
    return publicKey
  }
  // A signature that fails under the kept key may be signed by a new one: read the key again, once, and
  // check again. Not more than once per REREAD_MS, so that forged requests cannot make us fetch in a loop.
  const verified = async (body: Uint8Array | string, signature: string): Promise<boolean> => {
    if (await verifyCallback({ body, signature, publicKey: await fetchPublicKey() })) return true
    if (now() - fetchedAt < REREAD_MS) return false
    publicKey = undefined
    return verifyCallback({ body, signature, publicKey: await fetchPublicKey() })
  }
  // Answers already given, by delivery id. A real receiver keeps this in its database, next to the order.
  const answered = new Map<string, CallbackAnswer>()

  return async ({ body, headers }) => {
    const header = (name: string) => [headers[name]].flat()[0]
    const signature = header('x-signature')
    const deliveryId = header('x-delivery-id')
    if (!signature || !deliveryId) return reject(400, 'missing x-signature or x-delivery-id')
    if (!(await verified(body, signature))) {
      return reject(401, `bad x-signature: not signed by the key of ${options.paywatchUrl}/v2/public-key (read again)`, deliveryId)
    }
    if (options.webhookSecret && !(await verifyWebhook({ body, headers, secret: options.webhookSecret }))) {
      return reject(401, 'bad webhook-signature: not signed with PAYWATCH_WEBHOOK_SECRET, or older than 5 minutes', deliveryId)
    }
    const again = answered.get(deliveryId)
    if (again) return again // a retry of a delivery already handled: same answer, no second order

    const record = JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body)) as PaymentRecord
    await options.onPayment?.(record, deliveryId)
    let answer: CallbackAnswer
    if ((options.decide?.(record) ?? 'now') === 'later') {
      answer = { status: 202 }
      // Your own work first (here: none), then release the user waiting on the payment widget.
      setTimeout(() => {
        client.payments
          .release({
            blockchain: record.blockchain,
            // The record's own: null where it has none (a payment tracked without a nonce that timed out).
            transaction: record.transaction,
            sender: record.sender,
            nonce: record.nonce,
            secret_id: record.secret_id,
          })
          .catch((error: unknown) => console.error('release failed', error))
      }, 100)
    } else {
      answer = { status: 200, body: JSON.stringify({ forward_to: options.forwardTo?.(record) ?? null }) }
    }
    answered.set(deliveryId, answer)
    return answer
  }
}

/** The options from the environment, for running an example as it is. */
export function optionsFromEnv(env: Record<string, string | undefined>): ReceiverOptions {
  return {
    paywatchUrl: env.PAYWATCH_URL ?? 'http://127.0.0.1:3000',
    apiKey: env.PAYWATCH_API_KEY ?? '',
    webhookSecret: env.PAYWATCH_WEBHOOK_SECRET || undefined,
    log: (line) => console.log(line),
    forwardTo: (record) => `https://shop.example/thanks/${record.secret_id ?? ''}`,
    onPayment: (record, deliveryId) =>
      console.log(
        `verified callback ${deliveryId}: payment ${record.secret_id} ${record.status} (${record.amount} on ${record.blockchain})`,
      ),
  }
}
