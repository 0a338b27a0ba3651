import { isAddress } from 'viem'
import { AmountError, canonicalDecimal } from './amount.ts'
import { FieldErrors } from './field-errors.ts'
import { forwardTargetProblem } from './forward-target.ts'
import type { Commitment, Shape } from './tracking.ts'

export const MAX_PAYLOAD_BYTES = 8 * 1024
const MAX_UINT64 = 2n ** 64n - 1n
const MAX_CONFIRMATIONS = 10_000
const MAX_URL_LENGTH = 2048
export const secretPattern = /^[A-Za-z0-9._~-]{1,128}$/
export const hashPattern = /^0x[0-9a-fA-F]{64}$/

/** A create request after validation: addresses and hash lower-case, amounts canonical. */
export interface PaymentRequest {
  shape: Shape
  secretId: string
  blockchain: string
  sender: string
  nonce: bigint
  receiver: string
  token: string
  amount: string
  afterBlock: bigint
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

export type ParseResult<T> = { ok: true; value: T } | { ok: false; errors: FieldErrors['list'] }

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
  const b = body as Body
  const read = new Reader(b, errors)
  const secretKey = read.secretKey()
  const earlier = secretKey === 'uuid'
  const value: PaymentRequest = {
    shape: earlier ? 'earlier' : 'current',
    secretId: read.string(secretKey, { required: true, pattern: secretPattern, hint: '1 to 128 URL-safe characters' }) ?? '',
    blockchain: read.string('blockchain', { required: true, pattern: /^[a-z0-9_-]{1,40}$/, hint: 'a blockchain name such as "ethereum"' }) ?? '',
    sender: read.address('sender', true) ?? '',
    nonce: read.uint('nonce', true) ?? 0n,
    receiver: read.address('receiver', true) ?? '',
    token: read.address('token', true) ?? '',
    amount: read.decimal('amount', true) ?? '0',
    afterBlock: read.uint('after_block', true) ?? 0n,
    callback: read.url('callback', !earlier),
    transaction: read.string('transaction', { required: earlier, pattern: hashPattern, hint: 'a 0x-prefixed 32-byte hash' })?.toLowerCase() ?? null,
    commitment: (read.oneOf('commitment', ['confirmed', 'finalized']) ?? 'confirmed') as Commitment,
    confirmations: 1,
    integrationId: read.string('integration_id', { pattern: /^.{1,128}$/s, hint: 'an integration id' }),
    payload: read.payload('payload'),
    forwardTo: read.forwardTo('forward_to'),
    forwardOnFailure: read.boolean('forward_on_failure') ?? true,
    feeAmount: read.decimal('fee_amount', false),
    feeReceiver: read.address('fee_receiver', false),
    linkId: read.string('link_id', { pattern: /^.{1,128}$/s, hint: 'a link id' }),
    shop: read.string('shop', { pattern: /^[A-Za-z0-9.-]{1,255}$/, hint: 'a shop host name' })?.toLowerCase() ?? null,
    shopifyPaymentId: read.string('shopify_payment_id', { pattern: /^.{1,128}$/s, hint: 'a Shopify payment id' }),
  }
  // Required in the earlier form, except with `finalized`, which takes none.
  const confirmations = read.integer('confirmations', 1, MAX_CONFIRMATIONS, earlier && value.commitment !== 'finalized')
  if (value.commitment === 'finalized' && b.confirmations !== undefined && b.confirmations !== null) {
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
    errors.add(value.feeAmount === null ? 'fee_amount' : 'fee_receiver', `is required with ${value.feeAmount === null ? 'fee_receiver' : 'fee_amount'}`)
  }
  if ((value.shop === null) !== (value.shopifyPaymentId === null)) {
    errors.add(value.shop === null ? 'shop' : 'shopify_payment_id', `is required with ${value.shop === null ? 'shopify_payment_id' : 'shop'}`)
  }
  return errors.empty ? { ok: true, value } : { ok: false, errors: errors.list }
}

/** Field readers that record an error and return null instead of throwing (also used by the release body). */
export class Reader {
  private readonly body: Body
  private readonly errors: FieldErrors
  constructor(body: Body, errors: FieldErrors) {
    this.body = body
    this.errors = errors
  }

  /**
   * Which field names the secret: `uuid` (the earlier form) when only it is given, else `secret_id`.
   * null counts as absent, as for every optional field: `{"secret_id": "…", "uuid": null}` is the current form.
   */
  secretKey(): 'secret_id' | 'uuid' {
    const given = (key: string) => this.body[key] !== undefined && this.body[key] !== null
    if (given('secret_id') && given('uuid')) this.errors.add('uuid', 'cannot be sent with secret_id: send one of them (uuid is the earlier form)')
    return !given('secret_id') && given('uuid') ? 'uuid' : 'secret_id'
  }

  private present(key: string, required: boolean): unknown {
    const v = this.body[key]
    if (v === undefined || v === null) {
      if (required) this.errors.add(key, 'is required')
      return undefined
    }
    return v
  }

  string(key: string, o: { required?: boolean; pattern: RegExp; hint: string }): string | null {
    const v = this.present(key, o.required ?? false)
    if (v === undefined) return null
    if (typeof v !== 'string') return this.fail(key, `must be a string: ${o.hint}`)
    if (!o.pattern.test(v)) return this.fail(key, `must be ${o.hint}`)
    return v
  }

  address(key: string, required: boolean): string | null {
    const v = this.present(key, required)
    if (v === undefined) return null
    if (typeof v !== 'string' || !isAddress(v, { strict: false })) return this.fail(key, 'must be a 0x-prefixed 20-byte address')
    return v.toLowerCase()
  }

  uint(key: string, required: boolean): bigint | null {
    const v = this.present(key, required)
    if (v === undefined) return null
    let n: bigint | null = null
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) n = BigInt(v)
    else if (typeof v === 'string' && /^\d{1,20}$/.test(v)) n = BigInt(v)
    if (n === null || n > MAX_UINT64) return this.fail(key, 'must be a non-negative integer, as a number or a string of digits')
    return n
  }

  integer(key: string, min: number, max: number, required: boolean): number | null {
    const v = this.present(key, required)
    if (v === undefined) return null
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) return this.fail(key, `must be an integer from ${min} to ${max}`)
    return v
  }

  decimal(key: string, required: boolean): string | null {
    const v = this.present(key, required)
    if (v === undefined) return null
    if (typeof v !== 'string') return this.fail(key, 'must be a decimal string such as "1.5" (a string avoids rounding)')
    if (v.length > 100) return this.fail(key, 'is too long')
    try {
      return canonicalDecimal(v)
    } catch (error) {
      return this.fail(key, (error as AmountError).message)
    }
  }

  url(key: string, required: boolean): string | null {
    const v = this.present(key, required)
    if (v === undefined) return null
    if (typeof v !== 'string' || v.length > MAX_URL_LENGTH) return this.fail(key, `must be an http(s) URL of at most ${MAX_URL_LENGTH} characters`)
    let url: URL
    try {
      url = new URL(v)
    } catch {
      return this.fail(key, 'must be an absolute http(s) URL')
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return this.fail(key, 'must use http or https')
    return v
  }

  /** The same rule as a callback answer's `forward_to`, but only absolute URLs: there is no page yet to be relative to. */
  forwardTo(key: string): string | null {
    const v = this.present(key, false)
    if (v === undefined) return null
    const problem = forwardTargetProblem(v, { paths: false })
    return problem ? this.fail(key, problem) : (v as string)
  }

  oneOf(key: string, allowed: string[]): string | null {
    const v = this.present(key, false)
    if (v === undefined) return null
    if (typeof v !== 'string' || !allowed.includes(v)) return this.fail(key, `must be one of ${allowed.map((a) => `"${a}"`).join(', ')}`)
    return v
  }

  boolean(key: string): boolean | null {
    const v = this.present(key, false)
    if (v === undefined) return null
    if (typeof v !== 'boolean') return this.fail(key, 'must be true or false')
    return v
  }

  payload(key: string): Record<string, unknown> | null {
    const v = this.present(key, false)
    if (v === undefined) return null
    if (typeof v !== 'object' || Array.isArray(v)) return this.fail(key, 'must be a JSON object')
    let size: number
    try {
      size = Buffer.byteLength(JSON.stringify(v))
    } catch {
      return this.fail(key, 'must be serializable JSON') // e.g. nested too deep to serialize
    }
    if (size > MAX_PAYLOAD_BYTES) return this.fail(key, `must be at most ${MAX_PAYLOAD_BYTES} bytes serialized`)
    return v as Record<string, unknown>
  }

  private fail(key: string, message: string): null {
    this.errors.add(key, message)
    return null
  }
}
