/** Why a payment failed (docs/api.md §3); its own module so that the record tables and the tracking type both read it. */
export const failedReasons = [
  'FAILED',
  'MISMATCH',
  'TRANSACTION_MISMATCH',
  'TOKEN_MISMATCH',
  'SENDER_MISMATCH',
  'RECEIVER_MISMATCH',
  'NONCE_MISMATCH',
  'AMOUNT_MISMATCH',
  'TRACKING_TIMED_OUT',
] as const
export type FailedReason = (typeof failedReasons)[number]
