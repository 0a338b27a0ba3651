import type { Common } from '../../common/common.ts'
import type { Subsystem } from '../../common/subsystem.ts'
import { createAssetsReader } from '../../chain/assets-reader.ts'
import { createPriceOracle } from '../../chain/price-oracle.ts'
import type { ChainRegistry } from '../../chain/registry.ts'
import { assetsRoutes } from './assets.ts'
import { priceRoutes } from './prices.ts'

/** The assets and prices API (docs/api.md §5; behind API key auth and rate limits), with its readers. */
export function chainDataSubsystem(common: Common, chains: ChainRegistry): Subsystem {
  const assets = createAssetsReader(common.logger)
  const prices = createPriceOracle({ logger: common.logger, clock: common.clock, cacheMs: common.config.priceCacheMs })
  return {
    name: 'chain data',
    apiRoutes: [async (api) => assetsRoutes(api, { chains, assets }), async (api) => priceRoutes(api, { chains, prices })],
  }
}
