import type { Tracking } from '../domain/tracking.ts'
import type { DeadlineKey, PaymentKey } from '../store/payment-lookups.ts'

/**
 * What a PaymentChannel identifier names (docs/api.md, "Release notifications"): a payment by its sender's
 * nonce (widget 12 and earlier), or by sender, receiver and the payment's deadline (widget 13, no nonce).
 * Either way no account: the channel follows the tracking of that payment created first.
 */
export type ChannelKey = PaymentKey | DeadlineKey

export const isDeadlineKey = (key: ChannelKey): key is DeadlineKey => 'deadline' in key

/** The (blockchain, sender, receiver) a deadline key belongs to: what a tracking event can be matched by. */
export const deadlineGroup = (blockchain: string, sender: string, receiver: string): string =>
  `${blockchain}:${sender.toLowerCase()}:${receiver.toLowerCase()}`

/** One string per key, distinct between the two kinds. */
export function channelKeyString(key: ChannelKey): string {
  if (isDeadlineKey(key)) return `d:${deadlineGroup(key.blockchain, key.sender, key.receiver)}:${key.deadline}`
  return `n:${key.blockchain}:${key.sender.toLowerCase()}:${key.nonce}`
}

/**
 * Where a tracking's events may be awaited: the nonce key once sender and nonce are known, and the
 * deadline group once the sender is. (The record does not carry its deadline: each subscribed deadline
 * key of the group is checked against the tracking its channel follows.)
 */
export function channelRoutesOf(tracking: Tracking): { nonceKey?: PaymentKey; group?: string } {
  // Widened: a nonce-less tracking has neither until its payment is found.
  const sender: string | null = tracking.sender
  const nonce: bigint | null = tracking.nonce
  if (!sender) return {}
  return {
    ...(nonce !== null ? { nonceKey: { blockchain: tracking.blockchain, sender: sender.toLowerCase(), nonce } } : {}),
    group: deadlineGroup(tracking.blockchain, sender, tracking.receiver),
  }
}
