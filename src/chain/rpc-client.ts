import { createPublicClient, http, webSocket, type PublicClient, type Transport } from 'viem'
import { socketClientCache } from 'viem/utils'
import type { Clock } from '../common/clock.ts'
import type { ChainConfig } from '../config/chains.ts'
import { failover, type RpcAttempt } from './failover-transport.ts'

export interface RpcClientOptions {
  timeoutMs?: number
  /** Extra passes over every URL once all failed (with backoff). */
  retryRounds?: number
  /** Called for every request sent to one URL (metrics, logs). */
  onAttempt?: (attempt: RpcAttempt) => void
  /** The service's clock (endpoint cool-downs, `Retry-After` dates). */
  clock?: Clock
}

/**
 * A viem client over every RPC URL of a chain: on an error or a timeout the next URL is tried, a
 * failing URL is cooled down and asked last until it answers again, and when all failed for a
 * passing reason the request is retried after short jittered pauses (see failover-transport.ts).
 */
export function createRpcClient(chain: ChainConfig, options: RpcClientOptions = {}): PublicClient {
  const timeout = options.timeoutMs ?? chain.rpcTimeoutMs ?? 10_000
  const transports: Transport[] = chain.rpc.map((url) =>
    url.startsWith('ws') ? webSocket(url, { timeout, retryCount: 0 }) : http(url, { timeout, retryCount: 0, batch: false }),
  )
  return createPublicClient({
    // Passes over the URLs go on for up to two timeouts: one request that hung may be sent again, not many.
    transport: failover(transports, {
      retryRounds: options.retryRounds,
      onAttempt: options.onAttempt,
      clock: options.clock,
      requestBudgetMs: 2 * timeout,
    }),
    pollingInterval: chain.pollingIntervalMs,
    batch: { multicall: false },
  }) as PublicClient
}

/**
 * Closes the WebSocket connections viem keeps open for these URLs (requests and subscriptions share
 * them), so that a stopped service leaves no socket behind; a later request would open a new one.
 */
export function closeRpcSockets(urls: string[]): void {
  const wanted = new Set(urls.filter((url) => url.startsWith('ws')))
  if (wanted.size === 0) return
  for (const [id, client] of [...socketClientCache.entries()]) {
    let url: unknown
    try {
      url = (JSON.parse(id) as { url?: unknown }).url
    } catch {
      continue
    }
    if (typeof url === 'string' && wanted.has(url)) client.close()
  }
}
