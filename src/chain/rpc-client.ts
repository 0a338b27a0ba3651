import { createPublicClient, http, webSocket, type PublicClient, type Transport } from 'viem'
import type { ChainConfig } from '../config/chains.ts'
import { failover, type RpcAttempt } from './failover-transport.ts'

export interface RpcClientOptions {
  timeoutMs?: number
  /** Extra passes over every URL once all failed (with backoff). */
  retryRounds?: number
  /** Called for every request sent to one URL (metrics, logs). */
  onAttempt?: (attempt: RpcAttempt) => void
}

/**
 * A viem client over every RPC URL of a chain: on an error or a timeout the next URL is tried, a
 * failing URL is cooled down and asked last until it answers again, and when all failed the
 * request is retried with backoff (see failover-transport.ts).
 */
export function createRpcClient(chain: ChainConfig, options: RpcClientOptions = {}): PublicClient {
  const timeout = options.timeoutMs ?? chain.rpcTimeoutMs ?? 10_000
  const transports: Transport[] = chain.rpc.map((url) =>
    url.startsWith('ws') ? webSocket(url, { timeout, retryCount: 0 }) : http(url, { timeout, retryCount: 0, batch: false }),
  )
  return createPublicClient({
    transport: failover(transports, { retryRounds: options.retryRounds, onAttempt: options.onAttempt }),
    pollingInterval: chain.pollingIntervalMs,
    batch: { multicall: false },
  }) as PublicClient
}
