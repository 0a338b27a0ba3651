import { Type } from '@sinclair/typebox'
import { paymentRequestFields } from '../domain/payment-request.ts'
import { fieldsSchema } from './request-schemas.ts'

/** JSON schemas for the OpenAPI document. Request bodies are read by the domain parsers, whose field tables make their schemas. */

const Str = (description?: string) => Type.String(description ? { description } : {})
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()])
const StrOrInt = (description: string) => Type.Union([Type.String(), Type.Integer()], { description })

/** Generated from the problem catalogue (src/http/problem.ts); kept here for the routes that import it from here. */
export { problemSchema } from './problem-schemas.ts'

/** The POST /v2/payments body, from the table parsePaymentRequest reads (src/http/request-schemas.ts). */
export const createPaymentBodySchema = fieldsSchema(paymentRequestFields)

export const paymentRecordSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('pending'), Type.Literal('success'), Type.Literal('failed')]),
    failed_reason: Type.Optional(Nullable(Str())),
    blockchain: Str(),
    transaction: Nullable(Str()),
    sender: Nullable(Str('null until a nonce-less payment is found')),
    nonce: Type.Union([Type.String(), Type.Integer(), Type.Null()], {
      description: 'string in the current shape, number in the earlier shape; null until a nonce-less payment is found',
    }),
    receiver: Str(),
    token: Str(),
    decimals: Type.Optional(Type.Integer()),
    commitment: Type.Optional(Str()),
    confirmations: Type.Integer(),
    after_block: StrOrInt('string in the current shape, number in the earlier shape'),
    deadline: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Unix seconds (a nonce-less payment must be mined by then), or null',
    }),
    amount: Str(),
    fee_amount: Type.Optional(Nullable(Str())),
    fee_receiver: Type.Optional(Nullable(Str())),
    payload: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    secret_id: Type.Optional(Str()),
    uuid: Type.Optional(Str()),
    callback: Nullable(Str()),
    release: Type.Boolean(),
    forward_to: Nullable(Str()),
    forward_on_failure: Type.Boolean(),
    confirmed_at: Nullable(Str()),
    created_at: Str(),
    updated_at: Str(),
  },
  { additionalProperties: true },
)
