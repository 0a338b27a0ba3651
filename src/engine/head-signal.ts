import { webSocket } from 'viem'
import type { Logger } from 'pino'
import type { Hash } from 'viem'
import type { BlockHeader } from '../domain/block-window.ts'
import { backoffPolicies, delayFor } from '../common/backoff.ts'
import { createWakeSignal } from '../common/wake-signal.ts'

/**
 * Wakes the follower when a new head may exist: at once on a `newHeads` notification when one of
 * the chain's RPC URLs is a WebSocket, else (and as a backstop, should the subscription silently
 * stall) after the polling interval.
 */
export interface HeadSignal {
  /** Resolves on the next head notification, after `ms`, or when `signal` aborts. */
  next(ms: number, signal: AbortSignal): Promise<void>
  /** Whether a `newHeads` subscription is live. */
  readonly subscribed: boolean
  /**
   * The header of the last `newHeads` notification since the last call (then forgotten): the
   * follower takes it as the head instead of asking for the latest block again.
   */
  takeAnnounced(): BlockHeader | undefined
  stop(): Promise<void>
}

export interface HeadSignalOptions {
  /** ws(s) URL to subscribe to; none = polling only. */
  wsUrl?: string
  logger?: Logger
  /** Pause before subscribing again after the subscription failed. */
  resubscribeMs?: number
}

/**
 * viem's `unsubscribe()` settles only when the node answers: with the socket down (the node gone, a
 * reconnect under way) it never does, and a stop awaiting it would hang the shutdown for good.
 */
const UNSUBSCRIBE_TIMEOUT_MS = 1_000

function settledWithin(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))
  return Promise.race([
    work.then(
      () => {},
      () => {},
    ),
    late,
  ]).finally(() => clearTimeout(timer))
}

export function createHeadSignal(options: HeadSignalOptions): HeadSignal {
  const heads = createWakeSignal()
  let subscribed = false
  let stopped = false
  let unsubscribe: (() => Promise<unknown>) | undefined
  let retry: NodeJS.Timeout | undefined

  let announced: BlockHeader | undefined
  const notify = (data?: unknown) => {
    announced = headerOf(data)
    heads.wake()
  }

  const subscribe = async (url: string): Promise<void> => {
    if (stopped) return
    const again = () => {
      subscribed = false
      if (!stopped && !retry) {
        retry = setTimeout(() => {
          retry = undefined
          void subscribe(url)
        }, options.resubscribeMs ?? delayFor(backoffPolicies.headResubscribe, 1))
        retry.unref()
      }
    }
    try {
      const transport = webSocket(url, { retryCount: 0, reconnect: true, keepAlive: true })({})
      const subscription = await transport.value!.subscribe({
        params: ['newHeads'],
        onData: notify,
        onError: (error: unknown) => {
          options.logger?.warn({ err: error }, 'newHeads subscription failed; polling until it is back')
          again()
        },
      })
      if (stopped) {
        await subscription.unsubscribe().catch(() => {})
        return
      }
      subscribed = true
      unsubscribe = subscription.unsubscribe
      // A new subscription may have missed heads while it was down.
      notify()
    } catch (error) {
      options.logger?.warn({ err: error }, 'could not subscribe to newHeads; polling')
      again()
    }
  }
  if (options.wsUrl) void subscribe(options.wsUrl)

  return {
    get subscribed() {
      return subscribed
    },
    takeAnnounced() {
      const header = announced
      announced = undefined
      return header
    },
    next(ms, signal) {
      return heads.sleep(ms, signal)
    },
    async stop() {
      stopped = true
      clearTimeout(retry)
      heads.wake()
      if (unsubscribe) await settledWithin(unsubscribe(), UNSUBSCRIBE_TIMEOUT_MS)
    },
  }
}

/** The block header of a `newHeads` notification, or undefined when it carries none that reads as one. */
function headerOf(data: unknown): BlockHeader | undefined {
  const result = (data as { result?: Record<string, unknown> } | undefined)?.result
  if (!result) return undefined
  const { number, hash, parentHash, timestamp } = result
  const isHash = (value: unknown): value is Hash => typeof value === 'string' && /^0x[0-9a-fA-F]{64}$/.test(value)
  const isQuantity = (value: unknown): value is string => typeof value === 'string' && /^0x[0-9a-fA-F]{1,16}$/.test(value)
  if (!isQuantity(number) || !isHash(hash) || !isHash(parentHash) || !isQuantity(timestamp)) return undefined
  return {
    number: BigInt(number),
    hash: hash.toLowerCase() as Hash,
    parentHash: parentHash.toLowerCase() as Hash,
    timestamp: BigInt(timestamp),
  }
}
