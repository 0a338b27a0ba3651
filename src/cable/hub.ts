import type { PaymentKey } from '../store/payment-lookups.ts'
import { messageFrame } from './protocol.ts'
import type { WidgetMessage } from './widget-messages.ts'

/** One open WebSocket, as far as the hub is concerned. */
export interface CableClient {
  send(frame: string): void
}

/** One PaymentChannel subscription of one connection. */
export interface Subscription {
  client: CableClient
  /** The client's identifier string, echoed verbatim in every frame for it. */
  identifier: string
  key: PaymentKey
  /** Messages published to it so far: a late current-state answer is dropped when newer news went out. */
  published: number
}

export interface CableHub {
  add(subscription: Subscription): void
  remove(subscription: Subscription): void
  /** Sends the message to every subscriber of the payment; returns how many got it. */
  publish(key: PaymentKey, message: WidgetMessage): number
  hasSubscribers(key: PaymentKey): boolean
  /** The id of the tracking the payment's channel follows, once known (kept while it has subscribers). */
  followed(key: PaymentKey): string | undefined
  follow(key: PaymentKey, trackingId: string): void
  /** The payments someone here is waiting for. */
  keys(): PaymentKey[]
  readonly size: number
}

export const keyString = (key: PaymentKey): string => `${key.blockchain}:${key.sender.toLowerCase()}:${key.nonce}`

/**
 * Subscriptions by payment: the widget knows the payment, not the account. Each payment's channel
 * follows one tracking (the first created); the hub remembers which, so events need no read to be filtered.
 */
export function createCableHub(): CableHub {
  const byKey = new Map<string, { key: PaymentKey; subscriptions: Set<Subscription>; followed?: string }>()
  let size = 0
  return {
    add(subscription) {
      const k = keyString(subscription.key)
      let entry = byKey.get(k)
      if (!entry) byKey.set(k, (entry = { key: subscription.key, subscriptions: new Set() }))
      if (!entry.subscriptions.has(subscription)) size++
      entry.subscriptions.add(subscription)
    },
    remove(subscription) {
      const k = keyString(subscription.key)
      const entry = byKey.get(k)
      if (!entry?.subscriptions.delete(subscription)) return
      size--
      if (entry.subscriptions.size === 0) byKey.delete(k)
    },
    publish(key, message) {
      const entry = byKey.get(keyString(key))
      if (!entry) return 0
      for (const subscription of entry.subscriptions) {
        subscription.published++
        subscription.client.send(messageFrame(subscription.identifier, message))
      }
      return entry.subscriptions.size
    },
    hasSubscribers: (key) => byKey.has(keyString(key)),
    followed: (key) => byKey.get(keyString(key))?.followed,
    follow(key, trackingId) {
      const entry = byKey.get(keyString(key))
      if (entry) entry.followed = trackingId
    },
    keys: () => [...byKey.values()].map((entry) => entry.key),
    get size() {
      return size
    },
  }
}
