import { createPublicClient, http, webSocket, type PublicClient, type Transport } from 'viem'
import { socketClientCache } from 'viem/utils'
import type { Clock } from '../common/clock.ts'
import type { ChainConfig } from '../config/chains.ts'
import { failover, type RpcAttempt } from './failover-transport.ts'
import type { ProviderPool } from './provider-pool.ts'

export interface RpcClientOptions {
  timeoutMs?: number
  /** Extra passes over every URL once all failed (with backoff). */
  retryRounds?: number
  /** Called for every request sent to one URL (metrics, logs). */
  onAttempt?: (attempt: RpcAttempt) => void
  /** The service's clock (endpoint cool-downs, `Retry-After` dates). */
  clock?: Clock
  /** The chain's providers: ranking, budgets, heads, refusals (see provider-pool.ts). */
  pool?: ProviderPool
}

/**
 * A viem client over every RPC URL of a chain: on an error or a timeout the next URL is tried, a
 * failing URL is cooled down and asked last until it answers again, and when all failed for a
 * passing reason the request is retried after short jittered pauses (see failover-transport.ts).
 */
export function createRpcClient(chain: ChainConfig, options: RpcClientOptions = {}): PublicClient {
  const timeout = options.timeoutMs ?? chain.rpcTimeoutMs ?? 10_000
  const transports: Transport[] = chain.rpc.map((url) => transportOf(url, timeout))
  return createPublicClient({
    // Passes over the URLs go on for up to two timeouts: one request that hung may be sent again, not many.
    transport: failover(transports, {
      retryRounds: options.retryRounds,
      onAttempt: options.onAttempt,
      clock: options.clock,
      requestBudgetMs: 2 * timeout,
      pool: options.pool,
    }),
    pollingInterval: chain.pollingIntervalMs,
    batch: { multicall: false },
  }) as PublicClient
}

function transportOf(url: string, timeout: number): Transport {
  return url.startsWith('ws') ? webSocket(url, { timeout, retryCount: 0 }) : http(url, { timeout, retryCount: 0, batch: false })
}

/**
 * A client of provider `index` alone (identity and capability probes, quorum checks): it shares
 * the pool's budget, ranking data and metrics, and makes no passes over other URLs.
 */
export function createProviderClient(chain: ChainConfig, index: number, options: RpcClientOptions & { pool: ProviderPool }): PublicClient {
  const timeout = options.timeoutMs ?? chain.rpcTimeoutMs ?? 10_000
  return createPublicClient({
    transport: failover([transportOf(chain.rpc[index]!, timeout)], {
      retryRounds: options.retryRounds ?? 1,
      onAttempt: (attempt) => options.onAttempt?.({ ...attempt, endpoint: index }),
      clock: options.clock,
      requestBudgetMs: timeout,
      pool: options.pool,
      poolIndexes: [index],
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
