import { paymentRecordSchema } from './schemas.ts'

/**
 * Completes the OpenAPI document @fastify/swagger builds from the route schemas (docs/api.md §8): what a
 * route schema cannot say, or says for Fastify's serializer rather than for readers. Applied to the
 * whole document, so a route added later is completed the same way:
 * - `servers` and the licence;
 * - an `operationId` on every operation (the route's own when it names one, else made from the method and
 *   path: `get /admin/accounts/{id}/api-keys` → `getAdminAccountsIdApiKeys`);
 * - error answers typed `application/problem+json`, as they are served;
 * - answers that are not JSON (metrics, the PEM public key, the WebSocket upgrade) and 204 for DELETEs;
 * - the signed `x-signature` header on record answers, and the callback as a `callbacks` entry of
 *   POST /v2/payments with its headers.
 */

type Json = Record<string, any>

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const

const signatureHeader = {
  description:
    "RSA-PSS (SHA-256, salt length 64) signature of the exact body bytes, base64url, made with the key served at GET /v2/public-key (or the integration's key).",
  schema: { type: 'string' },
}

/** Headers of every callback POST (docs/api.md §4). */
const callbackHeaders = {
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

const callbacks = {
  paymentCompleted: {
    '{$request.body#/callback}': {
      post: {
        operationId: 'paymentCompletedCallback',
        summary: 'The completed payment record, POSTed to the callback URL once the payment is judged',
        parameters: Object.entries(callbackHeaders).map(([name, header]) => ({ name, in: 'header', ...header })),
        requestBody: { required: true, content: { 'application/json': { schema: paymentRecordSchema } } },
        responses: {
          '200': { description: 'Accepted and the user is released at once (forward_to is used).' },
          '202': { description: 'Accepted; the receiver releases the user later with POST /v2/payments/release.' },
          '410': { description: 'Gone: the endpoint is disabled at once.' },
          '429': { description: 'Too many requests: the next attempt waits at least Retry-After.' },
          '503': { description: 'Unavailable: the next attempt waits at least Retry-After.' },
          default: { description: 'Any other answer, or none in time, is a failed attempt; it is retried on the schedule.' },
        },
      },
    },
  },
}

/** Answers not written as JSON schemas in their routes: key `method path`. */
const nonJsonAnswers: Record<string, Json> = {
  'get /metrics': {
    '200': { description: 'Prometheus text exposition', content: { 'text/plain': { schema: { type: 'string' } } } },
  },
  'get /v2/public-key': {
    '200': {
      description: 'The SPKI PEM public key (as {"public_key"} when only JSON is accepted)',
      content: {
        'application/x-pem-file': { schema: { type: 'string' } },
        'application/json': {
          schema: { type: 'object', properties: { public_key: { type: 'string' } }, required: ['public_key'] },
        },
      },
    },
  },
  'get /cable': { '101': { description: 'Switched to the WebSocket protocol (ActionCable)' } },
}

/** Answers that carry `x-signature` over their body (reads and releases; a create is not signed). */
const signedAnswers = ['get /v2/payments/{secret_id}', 'post /v2/payments/release']

export function completeOpenApi(document: Json): Json {
  document.info = { ...document.info, license: { name: 'MIT', identifier: 'MIT' } }
  document.servers = [{ url: '/', description: 'this Paywatch node (the API is served at the root of its address)' }]
  for (const [path, item] of Object.entries<Json>(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined
      if (!operation) continue
      const key = `${method} ${path}`
      operation.operationId ??= operationIdOf(method, path)
      operation.responses = { ...operation.responses, ...nonJsonAnswers[key] }
      if (method === 'delete' && !hasSuccess(operation.responses)) operation.responses['204'] = { description: 'Deleted' }
      for (const [status, response] of Object.entries<Json>(operation.responses)) {
        if (response.description === 'Default Response') response.description = STATUS_TEXT[status] ?? 'Answer'
        if (isError(status)) typeAsProblem(response)
        else if (signedAnswers.includes(key) && status.startsWith('2')) {
          response.headers = { ...response.headers, 'x-signature': signatureHeader }
        }
      }
      if (key === 'post /v2/payments') operation.callbacks = callbacks
    }
  }
  return document
}

function operationIdOf(method: string, path: string): string {
  const words = path.split(/[^A-Za-z0-9]+/).filter(Boolean)
  return method + words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('')
}

const STATUS_TEXT: Record<string, string> = { '200': 'OK', '201': 'Created', '202': 'Accepted', '204': 'No content' }

const hasSuccess = (responses: Json): boolean => Object.keys(responses).some((status) => /^2/.test(status))
const isError = (status: string): boolean => /^[45]/.test(status)

/** An error answer whose schema is a problem (not, say, /readyz's 503 report) is served as problem+json. */
function typeAsProblem(response: Json): void {
  const content = response.content as Json | undefined
  const properties = content?.['application/json']?.schema?.properties as Json | undefined
  if (!properties?.title || !properties.status || !properties.code) return
  response.content = { 'application/problem+json': content!['application/json'] }
}
