// What DePay's payment widget POSTs to a merchant's `track.endpoint` and `track.poll.endpoint`, turned into
// Paywatch requests (docs/api.md, "A backend for the DePay widget"). Widget 12 sends the sender's nonce;
// widget 13 sends none, and names the payment by its `deadline` instead. Neither sends the receiver: it is
// the merchant's own address, which this backend is configured with.
import { createHmac } from 'node:crypto'
import type { PaymentRecord, PaymentRequest } from '@paywatch/client'

/** The track body (trace: before the transaction is sent; track: after, with `transaction`). */
export interface WidgetTrackBody {
  blockchain: string
  sender: string
  /** Widget 12 only (a string of digits). */
  nonce?: string | number
  after_block: string | number
  to_token: string
  /** Base units, as a string of digits. */
  to_amount: string
  to_decimals: number
  /** Base units of `to_token`. Widget 12 sends no fee receiver. */
  fee_amount?: string
  fee_receiver?: string
  /** The payment's deadline as the widget computed it (widget 13: milliseconds). */
  deadline?: string | number
  transaction?: string
  [other: string]: unknown
}

/** The poll body: widget 12 `{blockchain, transaction, sender, nonce, after_block, to_token}`; 13 has receiver and deadline instead of nonce. */
export interface WidgetPollBody {
  blockchain: string
  transaction?: string
  sender: string
  nonce?: string | number
  receiver?: string
  deadline?: string | number
  after_block?: string | number
  to_token?: string
}

export interface WidgetBodyOptions {
  /** The merchant's receiving address (the widget does not send it). */
  receiver: string
  /** Key of the secret ids: the trace, the track and every poll of one payment find the same tracking by it. */
  secret: string
  /** Where Paywatch sends the callback (this backend's /callback route). */
  callback: string
  /** Receiver of the widget's fee when the body names none (widget 12 sends `fee_amount` only). */
  feeReceiver?: string
  confirmations?: number
  forwardTo?: string
}

export class WidgetBodyError extends Error {
  override name = 'WidgetBodyError'
}

const digits = /^\d{1,78}$/
const text = (body: Record<string, unknown>, field: string): string => {
  const value = body[field]
  if (typeof value !== 'string' || value.length === 0 || value.length > 200) throw new WidgetBodyError(`${field} is missing`)
  return value
}
const unsigned = (body: Record<string, unknown>, field: string): string => {
  const value = body[field]
  const string = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value
  if (typeof string !== 'string' || !digits.test(string)) throw new WidgetBodyError(`${field} must be a non-negative integer`)
  return string
}

/** Base units to a decimal string (exact): ("1500000", 6) → "1.5". */
export function formatBaseUnits(amount: string, decimals: number): string {
  if (!digits.test(amount) || !Number.isInteger(decimals) || decimals < 0 || decimals > 77) {
    throw new WidgetBodyError('to_amount, fee_amount and to_decimals must be integers')
  }
  const padded = amount.padStart(decimals + 1, '0')
  const whole = padded.slice(0, padded.length - decimals).replace(/^0+(?=\d)/, '')
  const fraction = padded.slice(padded.length - decimals).replace(/0+$/, '')
  return fraction ? `${whole}.${fraction}` : whole
}

/**
 * The secret id of a widget's payment: an HMAC of what names it (widget 12: blockchain, sender, nonce;
 * 13: blockchain, sender, receiver, deadline), so that nobody else can read its record, and the poll,
 * which carries the same fields, finds it without a table of its own.
 */
export function widgetSecretId(
  secret: string,
  payment: { blockchain: string; sender: string; nonce?: string; receiver: string; deadline?: string },
): string {
  const name =
    payment.nonce !== undefined
      ? ['12', payment.blockchain, payment.sender.toLowerCase(), payment.nonce]
      : ['13', payment.blockchain, payment.sender.toLowerCase(), payment.receiver.toLowerCase(), payment.deadline ?? '']
  return `widget-${createHmac('sha256', secret).update(name.join(':')).digest('hex')}`
}

/** The fields of a create request this backend sends: widget 13's have no nonce and carry a deadline. */
export type WidgetPaymentRequest = Omit<PaymentRequest, 'nonce'> & { nonce?: string; deadline?: string }

/** POST /v2/payments for a widget's track body (both versions; throws WidgetBodyError on a malformed one). */
export function paymentRequestOf(body: WidgetTrackBody, options: WidgetBodyOptions): WidgetPaymentRequest {
  const fields = body as Record<string, unknown>
  const blockchain = text(fields, 'blockchain')
  const sender = text(fields, 'sender')
  const nonce = body.nonce !== undefined && body.nonce !== null ? unsigned(fields, 'nonce') : undefined
  const deadline = body.deadline !== undefined && body.deadline !== null ? unsigned(fields, 'deadline') : undefined
  if (nonce === undefined && deadline === undefined) throw new WidgetBodyError('a body without nonce needs deadline (widget 13)')
  const decimals = fields.to_decimals
  if (typeof decimals !== 'number') throw new WidgetBodyError('to_decimals must be a number')
  const feeReceiver = typeof body.fee_receiver === 'string' ? body.fee_receiver : options.feeReceiver
  const feeAmount =
    typeof body.fee_amount === 'string' && body.fee_amount !== '0' ? formatBaseUnits(unsigned(fields, 'fee_amount'), decimals) : undefined
  const transaction = typeof body.transaction === 'string' ? body.transaction : undefined
  return {
    blockchain,
    sender,
    ...(nonce !== undefined ? { nonce } : {}),
    receiver: options.receiver,
    token: text(fields, 'to_token'),
    amount: formatBaseUnits(unsigned(fields, 'to_amount'), decimals),
    after_block: unsigned(fields, 'after_block'),
    ...(deadline !== undefined ? { deadline } : {}),
    ...(transaction ? { transaction } : {}),
    ...(feeAmount && feeReceiver ? { fee_amount: feeAmount, fee_receiver: feeReceiver } : {}),
    ...(options.confirmations ? { confirmations: options.confirmations } : {}),
    ...(options.forwardTo ? { forward_to: options.forwardTo } : {}),
    secret_id: widgetSecretId(options.secret, { blockchain, sender, nonce, receiver: options.receiver, deadline }),
    callback: options.callback,
  }
}

/** The secret id a poll body names (throws WidgetBodyError on a malformed one). */
export function secretIdOfPoll(body: WidgetPollBody, options: Pick<WidgetBodyOptions, 'receiver' | 'secret'>): string {
  const fields = body as unknown as Record<string, unknown>
  const blockchain = text(fields, 'blockchain')
  const sender = text(fields, 'sender')
  if (body.nonce !== undefined && body.nonce !== null) {
    return widgetSecretId(options.secret, { blockchain, sender, nonce: unsigned(fields, 'nonce'), receiver: options.receiver })
  }
  const receiver = text(fields, 'receiver')
  if (receiver.toLowerCase() !== options.receiver.toLowerCase()) throw new WidgetBodyError('receiver is not this shop’s')
  return widgetSecretId(options.secret, { blockchain, sender, receiver, deadline: unsigned(fields, 'deadline') })
}

/**
 * The poll's answer once the user is released (callback answered 200, or POST /v2/payments/release):
 * what the widget channel tells, `forward_to` only for a success or with `forward_on_failure`. Undefined
 * before: the widget polls again on a 404.
 */
export function pollAnswerOf(record: PaymentRecord): { status: string; forward_to: string | null } | undefined {
  if (!record.release || record.status === 'pending') return undefined
  const forwards = record.status === 'success' || record.forward_on_failure === true
  return { status: record.status, forward_to: forwards ? (record.forward_to ?? null) : null }
}
