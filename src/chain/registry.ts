import type { PublicClient } from 'viem'
import type { Common } from '../common/common.ts'
import { trackedChains } from '../config/config.ts'
import type { ChainConfig } from '../config/chains.ts'
import type { RpcAttempt } from './failover-transport.ts'
import { createProviderMetrics } from './provider-metrics.ts'
import { ProviderPool } from './provider-pool.ts'
import { createProviderClient, createRpcClient } from './rpc-client.ts'
import { createRpcMetrics } from './rpc-metrics.ts'
import { createDecimalsReader } from './token-metadata.ts'

export interface ChainHandle {
  config: ChainConfig
  /** Asks the chain's providers in the pool's order, failing over between them. */
  client: PublicClient
  /** What is known of each provider (heads, capabilities, state). */
  pool: ProviderPool
  /** One client per provider, in `rpc` order (identity probes, quorum checks). */
  providerClients: PublicClient[]
  decimalsOf(token: string): Promise<number>
}

export interface ChainRegistry {
  /** A tracked chain whose RPC did not prove to be another network, or undefined. */
  get(name: string): ChainHandle | undefined
  all(): ChainHandle[]
  /**
   * Compares each provider's `eth_chainId` with the chain's configuration: a provider that serves
   * another network is refused; a chain whose every provider does is disabled.
   */
  verify(): Promise<void>
}

export function createChainRegistry(common: Common, options: { clientFor?: (chain: ChainConfig) => PublicClient } = {}): ChainRegistry {
  const handles = new Map<string, ChainHandle>()
  const rpcMetrics = createRpcMetrics(common.metrics.registry)
  const providerMetrics = createProviderMetrics(common.metrics.registry)
  for (const config of trackedChains(common.config)) {
    const pool = new ProviderPool({
      chain: config.name,
      urls: config.rpc,
      rps: config.rpcRps,
      clock: common.clock,
      logger: common.logger,
      metrics: providerMetrics,
    })
    const clientOptions = { clock: common.clock, pool, onAttempt: (attempt: RpcAttempt) => rpcMetrics.observe(config.name, attempt) }
    const client = options.clientFor?.(config) ?? createRpcClient(config, clientOptions)
    const providerClients = config.rpc.map((_, index) => createProviderClient(config, index, clientOptions))
    handles.set(config.name, { config, client, pool, providerClients, decimalsOf: createDecimalsReader(config, client) })
  }
  return {
    get: (name) => handles.get(name),
    all: () => [...handles.values()],
    async verify() {
      await Promise.all(
        [...handles.values()].map(async (handle) => {
          const log = common.logger.child({ chain: handle.config.name })
          // Each provider on its own: one that serves another network is refused, the others serve.
          const answered = await Promise.all(
            handle.providerClients.map(async (client, index) => {
              try {
                const chainId = await client.getChainId()
                if (chainId !== handle.config.chainId)
                  handle.pool.refuse(index, `it serves chain id ${chainId}, not ${handle.config.name}'s ${handle.config.chainId}`)
                return true
              } catch {
                // An unreachable RPC at start is not a wrong network: its calls will retry.
                return false
              }
            }),
          )
          if (handle.pool.serving().length === 0) {
            handles.delete(handle.config.name)
            log.error('RPC serves another network: chain disabled')
          } else if (!answered.some(Boolean)) log.warn('could not read eth_chainId at start')
        }),
      )
    },
  }
}
