import { getAddress, type Address } from 'viem'
import type { Logger } from 'pino'
import type { Clock } from '../common/clock.ts'
import { ratioToNumber } from '../domain/price-math.ts'
import { batchReaderFor } from './batch-reader.ts'
import { newChainPriceFacts, readUsdPrice, type ChainPriceFacts } from './price-quotes.ts'
import type { ChainHandle } from './registry.ts'
import { isNativeToken } from './token-metadata.ts'

export interface PriceOracle {
  /**
   * The USD price of one whole token, or null when no pool route prices it. The native currency
   * (any letter case of its placeholder address) is priced as the wrapped native token; USD
   * stablecoins are 1. Throws ChainUnavailableError when the RPC cannot be reached.
   */
  priceOf(chain: ChainHandle, token: Address): Promise<number | null>
}

/** Bounds memory when callers ask for many different tokens. */
const MAX_CACHED = 10_000

/**
 * Prices computed on chain, kept for `cacheMs` (a miss costs two batched RPC round trips). Concurrent
 * requests for the same token share one computation. A "no route" answer is cached like a price;
 * an RPC failure is not.
 */
export function createPriceOracle(options: { logger: Logger; clock: Clock; cacheMs: number }): PriceOracle {
  const cache = new Map<string, { expires: number; price: number | null }>()
  const inFlight = new Map<string, Promise<number | null>>()
  const facts = new WeakMap<ChainHandle, ChainPriceFacts>()

  const remember = (key: string, price: number | null) => {
    if (options.cacheMs <= 0) return
    const now = options.clock().getTime()
    if (cache.size >= MAX_CACHED) {
      for (const [k, entry] of cache) if (entry.expires <= now) cache.delete(k)
      // Still full: drop the oldest entries (a Map iterates in insertion order).
      for (const k of cache.keys()) {
        if (cache.size < MAX_CACHED) break
        cache.delete(k)
      }
    }
    cache.delete(key)
    cache.set(key, { expires: now + options.cacheMs, price })
  }

  async function compute(chain: ChainHandle, token: Address): Promise<number | null> {
    let chainFacts = facts.get(chain)
    if (!chainFacts) facts.set(chain, (chainFacts = newChainPriceFacts()))
    const price = await readUsdPrice(chain, batchReaderFor(chain, options.logger), chainFacts, token)
    if (!price) return null
    // A degenerate pool (a few wei against a huge quote reserve) must not turn into `null` in JSON.
    const value = ratioToNumber(price)
    return Number.isFinite(value) ? value : null
  }

  return {
    async priceOf(chain, requested) {
      const token = isNativeToken(requested) ? chain.config.wrapped : getAddress(requested.toLowerCase())
      if (!token) return null
      if (chain.config.stablecoins.some((stable) => stable.toLowerCase() === token.toLowerCase())) return 1
      const key = `${chain.config.name}:${token.toLowerCase()}`
      const hit = cache.get(key)
      if (hit && hit.expires > options.clock().getTime()) return hit.price
      let pending = inFlight.get(key)
      if (!pending) {
        pending = compute(chain, token)
          .then((price) => {
            remember(key, price)
            return price
          })
          .finally(() => inFlight.delete(key))
        inFlight.set(key, pending)
      }
      return pending
    },
  }
}
