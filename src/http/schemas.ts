import { Type } from '@sinclair/typebox'

/** JSON schemas for the OpenAPI document. Request bodies are read by the domain parsers. */

const Str = (description?: string) => Type.String(description ? { description } : {})
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()])
const StrOrInt = (description: string) => Type.Union([Type.String(), Type.Integer()], { description })

/** Generated from the problem catalogue (src/http/problem.ts); kept here for the routes that import it from here. */
export { problemSchema } from './problem-schemas.ts'

export const createPaymentBodySchema = Type.Object({
  blockchain: Str('e.g. ethereum, bsc'),
  sender: Str('sender address'),
  nonce: StrOrInt('sender nonce of the expected transaction'),
  receiver: Str(),
  token: Str('token address; 0xEeee…EEeE for the native currency'),
  amount: Str('human readable decimal string'),
  after_block: StrOrInt('block right before the payment was submitted'),
  secret_id: Type.Optional(Str('unguessable id of the payment attempt (earlier form: uuid)')),
  uuid: Type.Optional(Str('earlier form of secret_id')),
  callback: Type.Optional(Str('URL called when the status becomes success or failed')),
  transaction: Type.Optional(Str('transaction hash; without it the payment is traced before it is made')),
  commitment: Type.Optional(Type.Union([Type.Literal('confirmed'), Type.Literal('finalized')])),
  confirmations: Type.Optional(Type.Integer({ minimum: 1, description: 'default 1; not with finalized' })),
  integration_id: Type.Optional(Str()),
  payload: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'at most 8 KiB serialized' })),
  forward_to: Type.Optional(Str()),
  forward_on_failure: Type.Optional(Type.Boolean()),
  fee_amount: Type.Optional(Str()),
  fee_receiver: Type.Optional(Str()),
  link_id: Type.Optional(Str()),
  shop: Type.Optional(Str()),
  shopify_payment_id: Type.Optional(Str()),
})

export const paymentRecordSchema = Type.Object({
  status: Type.Union([Type.Literal('pending'), Type.Literal('success'), Type.Literal('failed')]),
  failed_reason: Type.Optional(Nullable(Str())),
  blockchain: Str(),
  transaction: Nullable(Str()),
  sender: Str(),
  nonce: StrOrInt('string in the current shape, number in the earlier shape'),
  receiver: Str(),
  token: Str(),
  decimals: Type.Optional(Type.Integer()),
  commitment: Type.Optional(Str()),
  confirmations: Type.Integer(),
  after_block: StrOrInt('string in the current shape, number in the earlier shape'),
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
}, { additionalProperties: true })
