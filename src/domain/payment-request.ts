import { FieldErrors } from './field-errors.ts'
import { FieldReader, secretKeyOf, type FieldTable, type ParseResult } from './request-fields.ts'
import type { Commitment, Shape } from './tracking.ts'

export { MAX_PAYLOAD_BYTES } from './request-fields.ts'
export type { ParseResult } from './request-fields.ts'
const MAX_CONFIRMATIONS = 10_000
export const secretPattern = /^[A-Za-z0-9._~-]{1,128}$/
export const hashPattern = /^0x[0-9a-fA-F]{64}$/

/** Fields both the create and the release body name the same way. */
export const sharedFields = {
  blockchain: {
    kind: 'text',
    required: true,
    pattern: /^[a-z0-9_-]{1,40}$/,
    hint: 'a blockchain name such as "ethereum"',
    description: 'e.g. ethereum, bsc',
    example: 'ethereum',
  },
  secret_id: {
    kind: 'text',
    pattern: secretPattern,
    hint: '1 to 128 URL-safe characters',
    required: 'unless uuid (the earlier form) is sent',
    description: 'unguessable id of the payment attempt (earlier form: uuid)',
    example: '3f2b8c1e-6f4a-4d7e-9b1a-2c5d8e7f9a01',
  },
  uuid: { kind: 'text', pattern: secretPattern, hint: '1 to 128 URL-safe characters', description: 'earlier form of secret_id' },
  transaction: {
    kind: 'text',
    pattern: hashPattern,
    hint: 'a 0x-prefixed 32-byte hash',
    example: '0x5b2a8d4c2e0f1b7a9c3d6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3',
  },
} as const satisfies FieldTable

/**
 * The POST /v2/payments body (docs/api.md §3): what parsePaymentRequest reads and the OpenAPI schema
 * documents (src/domain/request-fields.ts says why one table drives both).
 */
export const paymentRequestFields = {
  blockchain: sharedFields.blockchain,
  sender: { kind: 'address', required: 'with nonce', description: 'sender address; optional without nonce' },
  nonce: {
    kind: 'uint',
    description: 'sender nonce of the expected transaction; without it the payment is found by receiver, token and amount',
  },
  receiver: { kind: 'address', required: true },
  token: { kind: 'address', required: true, description: 'token address; 0xEeee…EEeE for the native currency' },
  amount: { kind: 'decimal', required: true, description: 'human readable decimal string' },
  after_block: { kind: 'uint', required: true, description: 'block right before the payment was submitted' },
  deadline: {
    kind: 'uint',
    // The record answers it as a JSON integer: no larger than JavaScript's clients read exactly.
    max: BigInt(Number.MAX_SAFE_INTEGER),
    description: 'Unix time in seconds (integer or numeric string): a payment without a nonce must be mined by then',
  },
  secret_id: sharedFields.secret_id,
  uuid: sharedFields.uuid,
  callback: {
    kind: 'url',
    required: 'unless uuid (the earlier form) is sent',
    description: 'URL called when the status becomes success or failed',
  },
  transaction: {
    ...sharedFields.transaction,
    required: 'with uuid (the earlier form)',
    description: 'transaction hash; without it the payment is traced before it is made',
  },
  commitment: { kind: 'choice', values: ['confirmed', 'finalized'] },
  confirmations: {
    kind: 'integer',
    min: 1,
    max: MAX_CONFIRMATIONS,
    required: 'with uuid (the earlier form), unless commitment is finalized',
    description: 'default 1; not with finalized',
  },
  integration_id: { kind: 'text', pattern: /^.{1,128}$/s, hint: 'an integration id' },
  payload: { kind: 'object', description: 'at most 8 KiB serialized' },
  forward_to: { kind: 'forward-url' },
  forward_on_failure: { kind: 'boolean' },
  fee_amount: { kind: 'decimal', required: 'with fee_receiver' },
  fee_receiver: { kind: 'address', required: 'with fee_amount' },
  link_id: { kind: 'text', pattern: /^.{1,128}$/s, hint: 'a link id' },
  shop: { kind: 'text', pattern: /^[A-Za-z0-9.-]{1,255}$/, hint: 'a shop host name', required: 'with shopify_payment_id' },
  shopify_payment_id: { kind: 'text', pattern: /^.{1,128}$/s, hint: 'a Shopify payment id', required: 'with shop' },
} as const satisfies FieldTable

/** A create request after validation: addresses and hash lower-case, amounts canonical. */
export interface PaymentRequest {
  shape: Shape
  secretId: string
  blockchain: string
  /** Null only without a nonce (docs/api.md, "Payments without a nonce"). */
  sender: string | null
  nonce: bigint | null
  receiver: string
  token: string
  amount: string
  afterBlock: bigint
  deadline: bigint | null
  /** Created without a nonce: identified by secret_id, matched by receiver. */
  nonceless: boolean
  callback: string | null
  transaction: string | null
  commitment: Commitment
  confirmations: number
  integrationId: string | null
  payload: Record<string, unknown> | null
  forwardTo: string | null
  forwardOnFailure: boolean
  feeAmount: string | null
  feeReceiver: string | null
  linkId: string | null
  shop: string | null
  shopifyPaymentId: string | null
}

type Body = Record<string, unknown>

/**
 * Reads a POST /v2/payments body (docs/api.md §3). Pure: what needs the chain
 * (token decimals, amount precision) or the database (integration, link, shop) is checked later.
 */
export function parsePaymentRequest(body: unknown): ParseResult<PaymentRequest> {
  const errors = new FieldErrors()
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    errors.add('', 'the body must be a JSON object')
    return { ok: false, errors: errors.list }
  }
  const read = new FieldReader(body as Body, errors, paymentRequestFields)
  const secretKey = secretKeyOf(read, errors)
  const earlier = secretKey === 'uuid'
  const nonce = read.uint('nonce')
  const nonceGiven = nonce !== null || (read.raw('nonce') ?? null) !== null
  const value: PaymentRequest = {
    shape: earlier ? 'earlier' : 'current',
    secretId: read.text(secretKey, true) ?? '',
    blockchain: read.text('blockchain') ?? '',
    sender: read.address('sender', nonceGiven),
    nonce,
    receiver: read.address('receiver') ?? '',
    token: read.address('token') ?? '',
    amount: read.decimal('amount') ?? '0',
    afterBlock: read.uint('after_block') ?? 0n,
    deadline: read.uint('deadline'),
    nonceless: !nonceGiven,
    callback: read.url('callback', !earlier),
    transaction: read.text('transaction', earlier)?.toLowerCase() ?? null,
    commitment: (read.choice('commitment') ?? 'confirmed') as Commitment,
    confirmations: 1,
    integrationId: read.text('integration_id'),
    payload: read.object('payload'),
    forwardTo: read.forwardUrl('forward_to'),
    forwardOnFailure: read.boolean('forward_on_failure') ?? true,
    feeAmount: read.decimal('fee_amount', false),
    feeReceiver: read.address('fee_receiver', false),
    linkId: read.text('link_id'),
    shop: read.text('shop', false)?.toLowerCase() ?? null,
    shopifyPaymentId: read.text('shopify_payment_id', false),
  }
  // Required in the earlier form, except with `finalized`, which takes none.
  const confirmations = read.integer('confirmations', earlier && value.commitment !== 'finalized')
  const givenConfirmations = read.raw('confirmations')
  if (value.commitment === 'finalized' && givenConfirmations !== undefined && givenConfirmations !== null) {
    errors.add('confirmations', 'cannot be set when commitment is "finalized"')
  } else if (confirmations !== null) {
    value.confirmations = confirmations
  }
  // `payload.integration` names the signing key as `integration_id` does: one that cannot be used, or
  // that names another integration, is refused rather than silently signing with a key the integrator does not check.
  const payloadIntegration = value.payload?.integration
  if (payloadIntegration !== undefined && payloadIntegration !== null) {
    if (typeof payloadIntegration !== 'string' || !/^.{1,128}$/s.test(payloadIntegration)) {
      errors.add('payload.integration', 'must be an integration id')
    } else if (value.integrationId === null) {
      value.integrationId = payloadIntegration
    } else if (value.integrationId !== payloadIntegration) {
      errors.add('payload.integration', 'must be the same as integration_id')
    }
  }
  if ((value.feeAmount === null) !== (value.feeReceiver === null)) {
    errors.add(
      value.feeAmount === null ? 'fee_amount' : 'fee_receiver',
      `is required with ${value.feeAmount === null ? 'fee_receiver' : 'fee_amount'}`,
    )
  }
  if ((value.shop === null) !== (value.shopifyPaymentId === null)) {
    errors.add(
      value.shop === null ? 'shop' : 'shopify_payment_id',
      `is required with ${value.shop === null ? 'shopify_payment_id' : 'shop'}`,
    )
  }
  return errors.empty ? { ok: true, value } : { ok: false, errors: errors.list }
}
