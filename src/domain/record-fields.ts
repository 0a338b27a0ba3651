import { checksumAddress as checksum } from './eip55.ts'
import { failedReasons } from './failed-reasons.ts'
import type { Tracking } from './tracking.ts'
import type { RecordTable } from './record-table.ts'

/**
 * The payment records (docs/api.md, records and endpoints) as field tables: each field says how its value
 * is read from a tracking AND what it is (kind, nullability, when it is present, description, example).
 * buildRecord() makes the answers and callbacks from a table; src/http/record-schemas.ts makes the
 * record's JSON schema in /openapi.json from the same table, so a field cannot be sent without being
 * documented, nor documented as anything but what is sent (`reverted_at`, `deadline` included).
 */

// Node 22+ (V8): a value JSON.stringify writes as the given JSON text. Not yet in TypeScript's lib.
declare global {
  interface JSON {
    rawJSON(text: string): unknown
  }
}

/**
 * A JSON number with every digit of `n`: the earlier shape echoes nonce and after_block as numbers,
 * and a JavaScript number would round anything above 2^53 (the echo must be the stored value).
 */
const exactNumber = (n: bigint): unknown => {
  const number = Number(n)
  return Number.isSafeInteger(number) ? number : JSON.rawJSON(n.toString())
}

const iso = (date: Date | null | undefined): string | null => (date ? date.toISOString() : null)
const checksumOrNull = (address: string | null | undefined): string | null => (address ? checksum(address) : null)
const orNull = <T, R>(value: T | null | undefined, as: (v: T) => R): R | null => (value === null || value === undefined ? null : as(value))

const EXAMPLE_TIME = '2026-01-15T10:24:31.000Z'
const failed = { test: (t: Tracking) => t.status === 'failed', description: 'only when status is failed' }
const reverted = {
  test: (t: Tracking) => t.revertedEver === true,
  description: 'only on trackings whose payment was ever reorganised out after success (reversal events)',
}

/** Fields every shape shares, read the same way. */
const shared = {
  status: {
    kind: 'text',
    values: ['pending', 'success', 'failed'],
    description: 'pending until judged; success and failed are final',
    example: 'success',
    value: (t) => t.status,
  },
  failed_reason: {
    kind: 'text',
    values: failedReasons,
    nullable: true,
    presentWhen: failed,
    description: 'why the payment failed',
    example: 'AMOUNT_MISMATCH',
    value: (t) => t.failedReason,
  },
  blockchain: { kind: 'text', description: 'name of the blockchain', example: 'ethereum', value: (t) => t.blockchain },
  transaction: {
    kind: 'hash',
    nullable: true,
    description: 'the paying transaction; null while a trace has not found it',
    example: '0x5b2a8d4c2e0f1b7a9c3d6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3',
    value: (t) => t.transaction,
  },
  sender: {
    kind: 'address',
    nullable: true,
    description: 'sender address; null until known for a payment tracked without one',
    example: '0x8ba1f109551bD432803012645Ac136ddd64DBA72',
    value: (t) => checksumOrNull(t.sender),
  },
  receiver: {
    kind: 'address',
    description: 'receiver address',
    example: '0x4675C7e5BaAFBFFbca748158bEcBA61ef3b0a263',
    value: (t) => checksum(t.receiver),
  },
  token: {
    kind: 'address',
    description: 'token address; 0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE for the native currency',
    example: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
    value: (t) => checksum(t.token),
  },
  confirmations: { kind: 'integer', description: 'block confirmations required', example: 1, value: (t) => t.confirmations },
  amount: { kind: 'decimal', description: 'expected amount, human readable', example: '20.5', value: (t) => t.amount },
  payload: {
    kind: 'object',
    nullable: true,
    description: 'the data stored with the payment',
    example: { order: 'A-1024' },
    value: (t) => t.payload,
  },
  callback: {
    kind: 'url',
    nullable: true,
    description: 'URL called when the status becomes success or failed',
    example: 'https://shop.example/paywatch/callback',
    value: (t) => t.callback,
  },
  release: { kind: 'boolean', description: 'true once the waiting user is released', example: true, value: (t) => t.release },
  forward_to: {
    kind: 'url',
    nullable: true,
    description: 'where the user is forwarded',
    example: 'https://shop.example/thanks',
    value: (t) => t.forwardTo,
  },
  forward_on_failure: {
    kind: 'boolean',
    description: 'whether a failed payment forwards the user too',
    example: true,
    value: (t) => t.forwardOnFailure,
  },
  confirmed_at: {
    kind: 'timestamp',
    nullable: true,
    description: 'when the payment was judged; null while pending',
    example: EXAMPLE_TIME,
    value: (t) => iso(t.confirmedAt),
  },
  created_at: {
    kind: 'timestamp',
    description: 'when the tracking was created',
    example: '2026-01-15T10:23:02.000Z',
    value: (t) => iso(t.createdAt),
  },
  updated_at: { kind: 'timestamp', description: 'when the tracking last changed', example: EXAMPLE_TIME, value: (t) => iso(t.updatedAt) },
  reverted_at: {
    kind: 'timestamp',
    nullable: true,
    presentWhen: reverted,
    description: 'when the paying transaction left the chain after success; null once it was mined again',
    example: null,
    value: (t) => iso(t.revertedAt),
  },
} as const satisfies RecordTable

/** In both full shapes right after `after_block`, as docs/api.md lists it. */
const deadline: RecordTable[string] = {
  kind: 'integer',
  nullable: true,
  description: 'Unix time (seconds) by which the payment is expected, or null',
  example: 1768473600,
  value: (t) => orNull(t.deadline, exactNumber),
}

/** The last fields of both full shapes, in their documented order. */
const fullRecordTail: RecordTable = {
  callback: shared.callback,
  release: shared.release,
  forward_to: shared.forward_to,
  forward_on_failure: shared.forward_on_failure,
  confirmed_at: shared.confirmed_at,
  created_at: shared.created_at,
  updated_at: shared.updated_at,
  reverted_at: shared.reverted_at,
}

/** Full record, current shape (docs/api.md, records and endpoints), field order as documented. */
export const CURRENT_RECORD: RecordTable = {
  status: shared.status,
  failed_reason: shared.failed_reason,
  blockchain: shared.blockchain,
  transaction: shared.transaction,
  sender: shared.sender,
  nonce: {
    kind: 'integer-text',
    nullable: true,
    description: 'sender nonce of the payment; null until known for a payment tracked without one',
    example: '42',
    value: (t) => orNull(t.nonce, String),
  },
  receiver: shared.receiver,
  token: shared.token,
  decimals: { kind: 'integer', description: 'token decimals', example: 6, value: (t) => t.decimals },
  commitment: {
    kind: 'text',
    values: ['confirmed', 'finalized'],
    description: 'confirmed: `confirmations` blocks; finalized: the chain finalized it',
    example: 'confirmed',
    value: (t) => t.commitment,
  },
  confirmations: shared.confirmations,
  after_block: {
    kind: 'integer-text',
    description: 'block right before the payment was submitted',
    example: '21500000',
    value: (t) => t.afterBlock.toString(),
  },
  deadline,
  amount: shared.amount,
  fee_amount: { kind: 'decimal', nullable: true, description: 'expected fee amount', example: '0.5', value: (t) => t.feeAmount },
  fee_receiver: {
    kind: 'address',
    nullable: true,
    description: 'fee receiver address',
    example: '0x1f9090aaE28b8a3dCeaDf281B0F12828e676c326',
    value: (t) => checksumOrNull(t.feeReceiver),
  },
  payload: shared.payload,
  secret_id: {
    kind: 'text',
    description: "the payment attempt's secret id in the integrator's system",
    example: '3f2b8c1e-6f4a-4d7e-9b1a-2c5d8e7f9a01',
    value: (t) => t.secretId,
  },
  ...fullRecordTail,
}

/** Full record, earlier `uuid` shape: numeric nonce/after_block, no decimals/commitment/fee fields. */
export const EARLIER_RECORD: RecordTable = {
  status: shared.status,
  failed_reason: shared.failed_reason,
  blockchain: shared.blockchain,
  transaction: shared.transaction,
  sender: shared.sender,
  nonce: {
    kind: 'integer',
    nullable: true,
    description: 'sender nonce of the payment; null until known for a payment tracked without one',
    example: 42,
    value: (t) => orNull(t.nonce, exactNumber),
  },
  receiver: shared.receiver,
  token: shared.token,
  confirmations: shared.confirmations,
  after_block: {
    kind: 'integer',
    description: 'block right before the payment was submitted',
    example: 21500000,
    value: (t) => exactNumber(t.afterBlock),
  },
  deadline,
  amount: shared.amount,
  payload: shared.payload,
  uuid: {
    kind: 'text',
    description: 'the payment attempt id (earlier form of secret_id)',
    example: 'a41c6d2e-0b7f-4e3a-8c9d-5f1e2a3b4c5d',
    value: (t) => t.secretId,
  },
  ...fullRecordTail,
}

/** Payment summary record, sent with `x-api-version` (link, Shopify and app endpoints: succeeded payments only). */
export const SUMMARY_RECORD: RecordTable = {
  blockchain: shared.blockchain,
  transaction: { ...shared.transaction, nullable: false, description: 'the paying transaction' },
  sender: { ...shared.sender, nullable: false, description: 'sender address' },
  receiver: shared.receiver,
  token: shared.token,
  amount: shared.amount,
  payload: shared.payload,
  after_block: CURRENT_RECORD.after_block!,
  commitment: CURRENT_RECORD.commitment!,
  confirmations: shared.confirmations,
  created_at: shared.created_at,
  confirmed_at: { ...shared.confirmed_at, nullable: false, description: 'when the payment was judged' },
}

/** Earlier link payment record: GET /links/{link_id}/payments without `x-api-version`; `payload` serialized. */
export const EARLIER_LINK_RECORD: RecordTable = {
  status: { ...shared.status, description: 'always success here' },
  failed_reason: { ...shared.failed_reason, presentWhen: undefined, description: 'why the payment failed; null unless failed' },
  blockchain: shared.blockchain,
  transaction: shared.transaction,
  sender: shared.sender,
  receiver: shared.receiver,
  token: shared.token,
  amount: shared.amount,
  payload: {
    kind: 'json-text',
    nullable: true,
    description: 'the payload as a string of serialized JSON',
    example: '{"order":"A-1024"}',
    value: (t) => (t.payload === null ? null : JSON.stringify(t.payload)),
  },
  confirmed_at: shared.confirmed_at,
}
