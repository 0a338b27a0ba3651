import { Type, type TSchema } from '@sinclair/typebox'
import { paymentRequestFields } from '../domain/payment-request.ts'
import { anyPaymentRecord } from './openapi-components.ts'
import { signatureHeader } from './openapi-webhooks.ts'
import { componentRef } from './problem-schemas.ts'
import { fieldsSchema } from './request-schemas.ts'

/** JSON schemas of the payment routes. Request bodies are read by the domain parsers, whose field tables make their schemas. */

/** Generated from the problem catalogue (src/http/problem.ts); kept here for the routes that import it from here. */
export { problemSchema } from './problem-schemas.ts'

/** The POST /v2/payments body, from the table parsePaymentRequest reads (src/http/request-schemas.ts). */
export const createPaymentBodySchema = fieldsSchema(paymentRequestFields, {
  blockchain: 'ethereum',
  sender: '0x8ba1f109551bD432803012645Ac136ddd64DBA72',
  nonce: '42',
  receiver: '0x4675C7e5BaAFBFFbca748158bEcBA61ef3b0a263',
  token: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
  amount: '20.5',
  after_block: '21500000',
  secret_id: '3f2b8c1e-6f4a-4d7e-9b1a-2c5d8e7f9a01',
  callback: 'https://shop.example/paywatch/callback',
  confirmations: 1,
  payload: { order: 'A-1024' },
  forward_to: 'https://shop.example/thanks',
})

/**
 * A record answer as the route sends it (pre-serialized JSON): its schema, and the `x-signature` header when
 * the route signs its body (reads and releases, docs/api.md §4; a create is not signed).
 */
export function recordAnswer(description: string, schema: TSchema, options: { signed: boolean }): TSchema {
  return Type.Unsafe({
    description,
    ...(options.signed ? { headers: { 'x-signature': { type: 'string', description: signatureHeader.description } } } : {}),
    content: { 'application/json': { schema } },
  })
}

/** The full record, in the shape the tracking was created with. */
export const fullRecordAnswer = (description: string, options: { signed: boolean }) => recordAnswer(description, anyPaymentRecord, options)

/** The summary record with x-api-version, the full record without. */
export const summaryOrFullAnswer = recordAnswer(
  'the summary record with x-api-version; the full record without',
  Type.Unsafe({ anyOf: [componentRef('PaymentSummary'), componentRef('PaymentRecord'), componentRef('EarlierPaymentRecord')] }),
  { signed: false },
)
