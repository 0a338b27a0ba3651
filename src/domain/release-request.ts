import { FieldErrors } from './field-errors.ts'
import { hashPattern, Reader, secretPattern, type ParseResult } from './payment-request.ts'

/** A POST /v2/payments/release body after validation: addresses and hash lower-case. */
export interface ReleaseRequest {
  secretId: string
  blockchain: string
  transaction: string
  sender: string
  nonce: bigint
}

/**
 * Reads a POST /v2/payments/release body (docs/api.md, records and endpoints): every field is required and every
 * problem is reported at once. `uuid` is the earlier name of `secret_id`; either names the same
 * secret, whatever form the tracking was created with.
 */
export function parseReleaseRequest(body: unknown): ParseResult<ReleaseRequest> {
  const errors = new FieldErrors()
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    errors.add('', 'the body must be a JSON object')
    return { ok: false, errors: errors.list }
  }
  const read = new Reader(body as Record<string, unknown>, errors)
  const secretKey = read.secretKey()
  const value: ReleaseRequest = {
    blockchain: read.string('blockchain', { required: true, pattern: /^[a-z0-9_-]{1,40}$/, hint: 'a blockchain name such as "ethereum"' }) ?? '',
    transaction: read.string('transaction', { required: true, pattern: hashPattern, hint: 'a 0x-prefixed 32-byte hash' })?.toLowerCase() ?? '',
    sender: read.address('sender', true) ?? '',
    nonce: read.uint('nonce', true) ?? 0n,
    secretId: read.string(secretKey, { required: true, pattern: secretPattern, hint: '1 to 128 URL-safe characters' }) ?? '',
  }
  return errors.empty ? { ok: true, value } : { ok: false, errors: errors.list }
}
