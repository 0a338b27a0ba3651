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
}

export interface CallbackAnswer {
  status: number
  body?: string
}

type Headers = Record<string, string | string[] | undefined>

export function createCallbackHandler(
  options: ReceiverOptions,
): (request: { body: Uint8Array | string; headers: Headers }) => Promise<CallbackAnswer> {
  const client = createClient({ baseUrl: options.paywatchUrl, apiKey: options.apiKey })
  let publicKey: Promise<string> | undefined
  // Fetched once: the key changes only when the operator replaces it (docs/operations.md).
  const fetchPublicKey = () =>
    (publicKey ??= fetch(`${options.paywatchUrl}/v2/public-key`).then((response) => {
      if (!response.ok) throw new Error(`GET /v2/public-key answered ${response.status}`)
      return response.text()
    }))
  // Answers already given, by delivery id. A real receiver keeps this in its database, next to the order.
  const answered = new Map<string, CallbackAnswer>()

  return async ({ body, headers }) => {
    const header = (name: string) => [headers[name]].flat()[0]
    const signature = header('x-signature')
    const deliveryId = header('x-delivery-id')
    if (!signature || !deliveryId) return { status: 400, body: 'missing x-signature or x-delivery-id' }
    if (!(await verifyCallback({ body, signature, publicKey: await fetchPublicKey() }))) return { status: 401, body: 'bad x-signature' }
    if (options.webhookSecret && !(await verifyWebhook({ body, headers, secret: options.webhookSecret }))) {
      return { status: 401, body: 'bad webhook-signature' }
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
            transaction: record.transaction!,
            // A judged payment's sender and nonce are known.
            sender: record.sender!,
            nonce: record.nonce!,
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
    forwardTo: (record) => `https://shop.example/thanks/${record.secret_id ?? ''}`,
    onPayment: (record, deliveryId) =>
      console.log(
        `verified callback ${deliveryId}: payment ${record.secret_id} ${record.status} (${record.amount} on ${record.blockchain})`,
      ),
  }
}
