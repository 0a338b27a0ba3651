import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { AssetsReader } from '../../chain/assets-reader.ts'
import type { ChainRegistry } from '../../chain/registry.ts'
import { problemResponses } from '../problem-schemas.ts'
import { addressParam, chainDataParams, readingChain, trackedChain } from './chain-data-input.ts'

export const assetSchema = Type.Object({
  name: Type.String(),
  symbol: Type.String(),
  address: Type.String({ description: 'token address; 0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE for the native currency' }),
  balance: Type.String({ description: 'integer amount in the smallest unit' }),
  decimals: Type.Integer(),
  type: Type.Union([Type.Literal('NATIVE'), Type.Literal('20')], { description: 'NATIVE, or 20 for an ERC-20 token' }),
})

export interface AssetsRoutesDeps {
  chains: ChainRegistry
  assets: AssetsReader
}

/** GET /v2/accounts/{blockchain}/{account}/assets (docs/api.md, records and endpoints). */
export async function assetsRoutes(app: FastifyInstance, deps: AssetsRoutesDeps): Promise<void> {
  app.get<{ Params: { blockchain: string; account: string } }>(
    '/v2/accounts/:blockchain/:account/assets',
    {
      schema: {
        summary: "An account's native balance and the listed tokens it holds (zero balances left out)",
        description:
          'Read in one batched RPC round trip (Multicall3 aggregate3, else a JSON-RPC batch). A token whose call fails is left out.',
        tags: ['assets'],
        params: chainDataParams('account'),
        response: { 200: Type.Array(assetSchema), ...problemResponses('VALIDATION_FAILED', 'UNSUPPORTED_BLOCKCHAIN', 'CHAIN_UNAVAILABLE') },
      },
    },
    async (request) => {
      const chain = trackedChain(deps.chains, request.params.blockchain)
      const account = addressParam(request.params.account, 'account')
      return readingChain(() => deps.assets.assetsOf(chain, account))
    },
  )
}
