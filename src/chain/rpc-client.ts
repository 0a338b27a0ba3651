import { createPublicClient, fallback, http, webSocket, type PublicClient, type Transport } from 'viem'
import type { ChainConfig } from '../config/chains.ts'

/**
 * A viem client over every RPC URL of a chain: on an error or a timeout the next URL is tried
 * (viem's fallback transport), each with retries and backoff.
 */
export function createRpcClient(chain: ChainConfig, options: { timeoutMs?: number; retryCount?: number } = {}): PublicClient {
  const transports: Transport[] = chain.rpc.map((url) =>
    url.startsWith('ws')
      ? webSocket(url, { timeout: options.timeoutMs ?? 10_000, retryCount: options.retryCount ?? 2 })
      : http(url, { timeout: options.timeoutMs ?? 10_000, retryCount: options.retryCount ?? 2, batch: false }),
  )
  return createPublicClient({
    transport: transports.length === 1 ? transports[0]! : fallback(transports, { rank: false }),
    pollingInterval: chain.pollingIntervalMs,
    batch: { multicall: false },
  }) as PublicClient
}
