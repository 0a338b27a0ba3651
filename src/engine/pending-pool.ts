import type { Logger } from 'pino'
import { RpcRequestError, webSocket, type Transaction } from 'viem'
import { backoffPolicies, delayFor } from '../common/backoff.ts'
import { pendingTransactionOf } from '../chain/pooled-block.ts'
import { withinMs } from './request-turns.ts'

/**
 * The transactions a provider announced as pending (`eth_subscribe` `newPendingTransactions` with whole
 * transactions), kept until they are mined or pushed out by newer ones: a block whose transactions were
 * all seen here is read with its hashes only (announced-block.ts).
 */
export interface PendingPool {
  /** Whether the subscription is live (a provider that refused it, or sends hashes only, is not asked again). */
  readonly subscribed: boolean
  /** The transaction `hash` as announced pending, if it was and is still kept. */
  get(hash: string): Transaction | undefined
  /** Forgets `hashes` (their block was read). */
  forget(hashes: readonly string[]): void
  stop(): Promise<void>
}

export interface PendingPoolOptions {
  /** The ws(s) URL to subscribe to, and its index among the chain's providers (the answers' source). */
  wsUrl: string
  provider: number
  logger?: Logger
  /** Transactions kept at most, the oldest pushed out first (default 16,384: ~20 MB at most). */
  capacity?: number
  /** Pause before subscribing again after the socket failed. */
  resubscribeMs?: number
}

const DEFAULT_CAPACITY = 16_384
const UNSUBSCRIBE_TIMEOUT_MS = 1_000

export function createPendingPool(options: PendingPoolOptions): PendingPool {
  const capacity = options.capacity ?? DEFAULT_CAPACITY
  const log = options.logger
  // Insertion order is arrival order: the first key is the oldest.
  const kept = new Map<string, Transaction>()
  let subscribed = false
  let stopped = false
  let refused = false
  let unsubscribe: (() => Promise<unknown>) | undefined
  let retry: NodeJS.Timeout | undefined

  const giveUp = (reason: string) => {
    refused = true
    subscribed = false
    kept.clear()
    log?.info({ reason }, 'pending transactions not subscribed: every block is read with its transactions')
    void unsubscribe?.().catch(() => {})
  }

  const take = (data: unknown) => {
    const raw = (data as { result?: unknown } | undefined)?.result
    if (typeof raw === 'string') return giveUp('the provider sends pending transactions as hashes only')
    const tx = pendingTransactionOf(raw, options.provider)
    if (!tx) return
    const key = tx.hash.toLowerCase()
    kept.delete(key)
    kept.set(key, tx)
    if (kept.size > capacity) kept.delete(kept.keys().next().value!)
  }

  const subscribe = async (): Promise<void> => {
    if (stopped || refused) return
    const again = () => {
      subscribed = false
      if (stopped || refused || retry) return
      retry = setTimeout(() => {
        retry = undefined
        void subscribe()
      }, options.resubscribeMs ?? delayFor(backoffPolicies.headResubscribe, 1))
      retry.unref()
    }
    try {
      const transport = webSocket(options.wsUrl, { retryCount: 0, reconnect: true, keepAlive: true })({})
      const subscription = await transport.value!.subscribe({
        params: ['newPendingTransactions', true] as never,
        onData: take,
        onError: () => again(),
      })
      unsubscribe = subscription.unsubscribe
      if (stopped || refused) {
        await subscription.unsubscribe().catch(() => {})
        return
      }
      subscribed = true
    } catch (error) {
      // The provider answered: it does not offer the subscription (asking again would be refused again).
      if (error instanceof RpcRequestError) return giveUp(error.shortMessage)
      again()
    }
  }
  void subscribe()

  return {
    get subscribed() {
      return subscribed
    },
    get(hash) {
      return kept.get(hash.toLowerCase())
    },
    forget(hashes) {
      for (const hash of hashes) kept.delete(hash.toLowerCase())
    },
    async stop() {
      stopped = true
      subscribed = false
      clearTimeout(retry)
      kept.clear()
      // As the head signal's: with the socket down the node never answers an unsubscribe.
      if (unsubscribe)
        await withinMs(
          unsubscribe().then(() => {}),
          UNSUBSCRIBE_TIMEOUT_MS,
        )
    },
  }
}
