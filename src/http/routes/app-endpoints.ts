import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { fullRecord, summaryRecord } from '../../domain/records.ts'
import type { Db } from '../../store/infrastructure/database.ts'
import { findSucceededShopifyPayment } from '../../store/shopify-payments.ts'
import { listShops } from '../../store/shops.ts'
import { appHeaders, shopSchema } from '../account-data-schemas.ts'
import { apiVersionOf } from '../api-version.ts'
import type { AppTokenAuth } from '../app-token-auth.ts'
import { notFound, type ProblemCode } from '../problem.ts'
import { problemResponses } from '../problem-schemas.ts'
import { summaryOrFullAnswer } from '../schemas.ts'

const security = [{ apiKey: [], accessToken: [] }]
const tags = ['apps']
/** The access token (src/http/app-token-auth.ts): missing, unknown or another app's (401), without the scope (403). */
const appProblems = (...codes: ProblemCode[]) => problemResponses('UNAUTHORIZED', 'FORBIDDEN', ...codes)

/** An app reads the data of an account that granted it scopes (docs/api.md, records and endpoints). */
export async function appEndpointRoutes(app: FastifyInstance, deps: { db: Db; authorize: AppTokenAuth }): Promise<void> {
  app.get<{ Params: { id: string } }>(
    '/apps/payments/shopify/:id',
    {
      schema: {
        summary: "A granting account's succeeded Shopify payment (scope payments.shopify.read, or payments.read)",
        description: 'Summary record with x-api-version, full record without.',
        tags,
        security,
        headers: appHeaders,
        params: Type.Object({ id: Type.String({ description: 'Shopify payment id' }) }),
        response: { 200: summaryOrFullAnswer, ...appProblems('NOT_FOUND') },
      },
    },
    async (request, reply) => {
      const version = apiVersionOf(request)
      const { grantingAccountId } = await deps.authorize(request, 'payments.shopify.read')
      const tracking = await findSucceededShopifyPayment(deps.db, grantingAccountId, request.params.id)
      if (!tracking) throw notFound('succeeded Shopify payment')
      return reply.type('application/json').send(JSON.stringify(version ? summaryRecord(tracking) : fullRecord(tracking)))
    },
  )

  app.get(
    '/apps/checkouts/shopify',
    {
      schema: {
        summary: 'Shops connected to the granting account (scope checkouts.shopify.read)',
        tags,
        security,
        headers: appHeaders,
        response: { 200: Type.Array(shopSchema), ...appProblems() },
      },
    },
    async (request, reply) => {
      const { grantingAccountId } = await deps.authorize(request, 'checkouts.shopify.read')
      const shops = await listShops(deps.db, grantingAccountId)
      return reply.type('application/json').send(JSON.stringify(shops.map((s) => ({ shop: s.shop }))))
    },
  )
}
