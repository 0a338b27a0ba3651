import type { Clock } from '../common/clock.ts'
import type { ChainReadiness } from '../common/readiness.ts'
import type { ChainRegistry } from '../chain/registry.ts'
import { withProviders } from './chain-health.ts'

const TIMEOUT_MS = 3_000
const CACHE_MS = 2_000

/** Asks each chain's RPC for its head (cached briefly, so a probe storm costs one call per chain). */
export function createRpcReadiness(chains: ChainRegistry, clock: Clock): () => Promise<ChainReadiness[]> {
  let cached: { at: number; value: Promise<ChainReadiness[]> } | undefined
  return () => {
    const now = clock().getTime()
    if (!cached || now - cached.at > CACHE_MS) cached = { at: now, value: probe(chains, clock) }
    return cached.value
  }
}

async function probe(chains: ChainRegistry, clock: Clock): Promise<ChainReadiness[]> {
  return Promise.all(
    chains.all().map(async (handle): Promise<ChainReadiness> => {
      const { config, client } = handle
      try {
        const block = await Promise.race([
          client.getBlock({ blockTag: 'latest' }),
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error('RPC timed out')), TIMEOUT_MS).unref()),
        ])
        const age = Math.max(0, Math.round(clock().getTime() / 1000 - Number(block.timestamp)))
        return withProviders(handle, { name: config.name, ok: true, head: block.number.toString(), headAgeSeconds: age })
      } catch (error) {
        return withProviders(handle, { name: config.name, ok: false, error: (error as Error).message.split('\n')[0] })
      }
    }),
  )
}
