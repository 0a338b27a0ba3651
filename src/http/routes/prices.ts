import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { PriceOracle } from '../../chain/price-oracle.ts'
import type { ChainRegistry } from '../../chain/registry.ts'
import { problem } from '../problem.ts'
import { problemResponses } from '../problem-schemas.ts'
import { addressParam, chainDataParams, readingChain, trackedChain } from './chain-data-input.ts'

export interface PriceRoutesDeps {
  chains: ChainRegistry
  prices: PriceOracle
}

/** GET /v2/prices/{blockchain}/{token_address} (docs/api.md, records and endpoints): a bare JSON number. */
export async function priceRoutes(app: FastifyInstance, deps: PriceRoutesDeps): Promise<void> {
  app.get<{ Params: { blockchain: string; token_address: string } }>(
    '/v2/prices/:blockchain/:token_address',
    {
      schema: {
        summary: 'USD price of one whole token, from on-chain DEX liquidity',
        description:
          'USD stablecoins are 1; the native currency (0xEeee…EEeE, any letter case) is priced as its wrapped token. ' +
          'Quotes from Uniswap V2-style pairs (and configured V3 pools) against each stablecoin, directly and through the wrapped ' +
          'native token; thin pools ignored, outliers beyond 10% of the median dropped, the rest averaged. Cached briefly.',
        tags: ['prices'],
        params: chainDataParams('token_address'),
        response: {
          200: Type.Number({ description: 'USD price of one whole token' }),
          ...problemResponses('VALIDATION_FAILED', 'UNSUPPORTED_BLOCKCHAIN', 'NOT_FOUND', 'CHAIN_UNAVAILABLE'),
        },
      },
    },
    async (request, reply) => {
      const chain = trackedChain(deps.chains, request.params.blockchain)
      const token = addressParam(request.params.token_address, 'token_address')
      const price = await readingChain(() => deps.prices.priceOf(chain, token))
      if (price === null) throw problem('NOT_FOUND', `no price route for token ${token} on ${chain.config.name}`)
      return reply.type('application/json').send(JSON.stringify(price))
    },
  )
}
