/**
 * What Paywatch sends to integrators (docs/api.md §4 and §8), in /openapi.json: the callback of a judged
 * payment, the reversal events and the test event, as OpenAPI 3.1 top-level `webhooks`, each with the
 * headers every callback POST carries. POST /v2/payments states its callback itself (src/http/routes/payments.ts);
 * the document builder gives every callback operation these headers (src/http/openapi-document.ts).
 */

type Json = Record<string, unknown>

const schemaRef = (id: string) => ({ $ref: `#/components/schemas/${id}` })

export const signatureHeader = {
  description:
    "RSA-PSS (SHA-256, salt length 64) signature of the exact body bytes, base64url, made with the key served at GET /v2/public-key (or the integration's key).",
  schema: { type: 'string' },
}

/** Headers of every callback POST (docs/api.md §4, §8). */
const callbackHeaders: Record<string, Json> = {
  'x-signature': { ...signatureHeader, required: true },
  'x-delivery-id': {
    description: 'Id of this delivery, the same on every attempt: deduplicate on it.',
    required: true,
    schema: { type: 'string' },
  },
  'webhook-id': { description: 'Standard Webhooks id, equal to x-delivery-id.', schema: { type: 'string' } },
  'webhook-timestamp': { description: 'Standard Webhooks: Unix seconds of this attempt.', schema: { type: 'string' } },
  'webhook-signature': {
    description:
      'Standard Webhooks: space-separated `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">` under the `whsec_` secret of the integration or account.',
    schema: { type: 'string' },
  },
}

export const callbackParameters = (event?: string): Json[] => [
  ...Object.entries(callbackHeaders).map(([name, header]) => ({ name, in: 'header', ...header })),
  ...(event
    ? [{ name: 'x-paywatch-event', in: 'header', required: true, description: 'The event sent', schema: { type: 'string', enum: [event] } }]
    : []),
]

/** How the receiver's answer is taken (docs/api.md §4, §8). */
export const callbackAnswers = {
  '200': { description: 'Accepted and the user is released at once (forward_to is used).' },
  '202': { description: 'Accepted; the receiver releases the user later with POST /v2/payments/release.' },
  '410': { description: 'Gone: the endpoint is disabled at once.' },
  '429': { description: 'Too many requests: the next attempt waits at least Retry-After.' },
  '503': { description: 'Unavailable: the next attempt waits at least Retry-After.' },
  default: { description: 'Any other answer, or none in time, is a failed attempt; it is retried on the schedule.' },
}

const eventAnswers = {
  '2XX': { description: 'Received.' },
  default: {
    description: 'Any other answer, or none in time, is a failed attempt (events are retried like callbacks; the test event is not).',
  },
}

const webhook = (operationId: string, summary: string, event: string | undefined, schema: Json, responses: Json): Json => ({
  post: {
    operationId,
    summary,
    parameters: callbackParameters(event),
    requestBody: { required: true, content: { 'application/json': { schema } } },
    responses,
  },
})

export const webhooks = {
  paymentCompleted: webhook(
    'paymentCompletedWebhook',
    'The payment record, POSTed to its callback URL once the payment is judged',
    undefined,
    { anyOf: [schemaRef('PaymentRecord'), schemaRef('EarlierPaymentRecord')] },
    callbackAnswers,
  ),
  'payment.reverted': webhook(
    'paymentRevertedWebhook',
    "After success, the payment's transaction left the canonical chain (opt-in per integration: reversal_events)",
    'payment.reverted',
    schemaRef('ReversalEvent'),
    eventAnswers,
  ),
  'payment.reconfirmed': webhook(
    'paymentReconfirmedWebhook',
    'A reverted payment was mined again and reached its commitment (opt-in per integration: reversal_events)',
    'payment.reconfirmed',
    schemaRef('ReversalEvent'),
    eventAnswers,
  ),
  test: webhook('testWebhook', 'Sent once by POST /v2/endpoints/test; not retried', 'test', schemaRef('TestEvent'), eventAnswers),
}
