import { type ChannelKey, channelKeyString, deadlineGroup, isDeadlineKey } from './channel-key.ts'
import type { DeadlineKey } from '../store/payment-lookups.ts'
import { messageFrame } from './protocol.ts'
import type { WidgetMessage } from './widget-messages.ts'

/** One open WebSocket, as far as the hub is concerned. */
export interface CableClient {
  send(frame: string): void
  /** A message carrying `release: true` went to this subscription: the widget waits no more on it. */
  released(subscription: Subscription): void
}

/** One PaymentChannel subscription of one connection. */
export interface Subscription {
  client: CableClient
  /** The client's identifier string, echoed verbatim in every frame for it. */
  identifier: string
  key: ChannelKey
  /** Messages published to it so far: a late current-state answer is dropped when newer news went out. */
  published: number
  /** The last final state sent (JSON): the same state again, from the event and the subscribe's read, is not repeated. */
  lastStatus?: string
}

export interface CableHub {
  add(subscription: Subscription): void
  remove(subscription: Subscription): void
  /**
   * Sends the message to every subscriber of the payment; returns how many got it. `repeat`: also to a
   * subscriber last told the same final state (after a gap in which events may have been lost).
   */
  publish(key: ChannelKey, message: WidgetMessage, options?: { repeat?: boolean }): number
  hasSubscribers(key: ChannelKey): boolean
  /** The subscribed deadline keys of a (blockchain, sender, receiver) group (see channelRoutesOf). */
  deadlineKeys(group: string): DeadlineKey[]
  /** The id of the tracking the payment's channel follows, once known (kept while it has subscribers). */
  followed(key: ChannelKey): string | undefined
  follow(key: ChannelKey, trackingId: string): void
  /** The payments someone here is waiting for. */
  keys(): ChannelKey[]
  readonly size: number
}

/** Whether the message tells the widget its user is released (it stops waiting: docs/api.md §4). */
export const releases = (message: WidgetMessage): boolean => 'release' in message && message.release

/**
 * Subscriptions by payment: the widget knows the payment, not the account. Each payment's channel
 * follows one tracking (the first created); the hub remembers which, so events need no read to be filtered.
 * Deadline keys are also found by their group, since a tracking event names no deadline.
 */
export function createCableHub(): CableHub {
  const byKey = new Map<string, { key: ChannelKey; subscriptions: Set<Subscription>; followed?: string }>()
  const groups = new Map<string, Map<string, DeadlineKey>>()
  let size = 0
  const groupOf = (key: DeadlineKey) => deadlineGroup(key.blockchain, key.sender, key.receiver)
  return {
    add(subscription) {
      const k = channelKeyString(subscription.key)
      let entry = byKey.get(k)
      if (!entry) {
        byKey.set(k, (entry = { key: subscription.key, subscriptions: new Set() }))
        const key = subscription.key
        if (isDeadlineKey(key)) {
          const group = groupOf(key)
          let members = groups.get(group)
          if (!members) groups.set(group, (members = new Map()))
          members.set(k, key)
        }
      }
      if (!entry.subscriptions.has(subscription)) size++
      entry.subscriptions.add(subscription)
    },
    remove(subscription) {
      const k = channelKeyString(subscription.key)
      const entry = byKey.get(k)
      if (!entry?.subscriptions.delete(subscription)) return
      size--
      if (entry.subscriptions.size > 0) return
      byKey.delete(k)
      const key = entry.key
      if (!isDeadlineKey(key)) return
      const group = groupOf(key)
      const members = groups.get(group)
      members?.delete(k)
      if (members?.size === 0) groups.delete(group)
    },
    publish(key, message, options) {
      const entry = byKey.get(channelKeyString(key))
      if (!entry) return 0
      // Copied: a release may close the connection, which removes its subscriptions from this set.
      const subscriptions = [...entry.subscriptions]
      for (const subscription of subscriptions) deliver(subscription, message, options)
      return subscriptions.length
    },
    hasSubscribers: (key) => byKey.has(channelKeyString(key)),
    deadlineKeys: (group) => [...(groups.get(group)?.values() ?? [])],
    followed: (key) => byKey.get(channelKeyString(key))?.followed,
    follow(key, trackingId) {
      const entry = byKey.get(channelKeyString(key))
      if (entry) entry.followed = trackingId
    },
    keys: () => [...byKey.values()].map((entry) => entry.key),
    get size() {
      return size
    },
  }
}

/**
 * Sends one message to one subscription, unless it is the final state the subscription was last told
 * (a subscribe's read of the current state and the event of the same change can both arrive). After a
 * release the connection may close. Answers whether it was sent.
 */
export function deliver(subscription: Subscription, message: WidgetMessage, options: { repeat?: boolean } = {}): boolean {
  if ('status' in message) {
    const text = JSON.stringify(message)
    if (subscription.lastStatus === text && !options.repeat) return false
    subscription.lastStatus = text
  }
  subscription.published++
  subscription.client.send(messageFrame(subscription.identifier, message))
  if (releases(message)) subscription.client.released(subscription)
  return true
}
