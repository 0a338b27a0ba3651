import { FieldErrors } from './field-errors.ts'
import { sharedFields, type ParseResult } from './payment-request.ts'
import { FieldReader, secretKeyOf, type FieldTable } from './request-fields.ts'

/**
 * A POST /v2/payments/release body after validation: addresses and hash lower-case. null: sent as null, as
 * the record of a payment tracked without a nonce has it when the payment ended before it was known.
 */
export interface ReleaseRequest {
  secretId: string
  blockchain: string
  transaction: string | null
  sender: string | null
  nonce: bigint | null
}

/** Said of the three fields a payment tracked without a nonce may end without (docs/api.md, release). */
const UNKNOWN_TO_THE_RECORD = '; null when the record has none'

/**
 * The POST /v2/payments/release body: what parseReleaseRequest reads and the OpenAPI schema documents
 * (src/domain/request-fields.ts says why one table drives both).
 */
export const releaseRequestFields = {
  blockchain: sharedFields.blockchain,
  transaction: {
    ...sharedFields.transaction,
    required: true,
    nullable: true,
    description: `the record's transaction, or the hash it carried before a replacing transaction was judged${UNKNOWN_TO_THE_RECORD}`,
  },
  sender: { kind: 'address', required: true, nullable: true, description: `sender address, any letter case${UNKNOWN_TO_THE_RECORD}` },
  nonce: {
    kind: 'uint',
    required: true,
    nullable: true,
    description: `sender nonce, as a number or a string of digits${UNKNOWN_TO_THE_RECORD}`,
  },
  secret_id: sharedFields.secret_id,
  uuid: sharedFields.uuid,
} as const satisfies FieldTable

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
  const read = new FieldReader(body as Record<string, unknown>, errors, releaseRequestFields)
  const secretKey = secretKeyOf(read, errors)
  const value: ReleaseRequest = {
    blockchain: read.text('blockchain') ?? '',
    transaction: read.text('transaction')?.toLowerCase() ?? null,
    sender: read.address('sender'),
    nonce: read.uint('nonce'),
    secretId: read.text(secretKey, true) ?? '',
  }
  return errors.empty ? { ok: true, value } : { ok: false, errors: errors.list }
}
