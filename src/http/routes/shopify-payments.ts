import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { fullRecord, summaryRecord } from '../../domain/records.ts'
import type { Db } from '../../store/infrastructure/database.ts'
import { findSucceededShopifyPayment } from '../../store/shopify-payments.ts'
import { apiVersionHeaders } from '../account-data-schemas.ts'
import { apiVersionOf } from '../api-version.ts'
import { callerOf } from '../auth.ts'
import { notFound } from '../problem.ts'
import { problemResponses } from '../problem-schemas.ts'
import { fullRecordAnswer, summaryOrFullAnswer } from '../schemas.ts'

const idParams = Type.Object({ id: Type.String({ description: 'the Shopify payment id given as shopify_payment_id' }) })

/** The key account's own succeeded Shopify payments (docs/api.md, records and endpoints). */
export async function shopifyPaymentRoutes(app: FastifyInstance, deps: { db: Db }): Promise<void> {
  const find = async (accountId: string, id: string) => {
    const tracking = await findSucceededShopifyPayment(deps.db, accountId, id)
    // Pending, failed, unknown and another account's look the same.
    if (!tracking) throw notFound('succeeded Shopify payment')
    return tracking
  }

  app.get<{ Params: { id: string } }>(
    '/v2/payments/shopify/:id',
    {
      schema: {
        summary: 'A succeeded Shopify payment of the account (full record)',
        tags: ['shopify'],
        params: idParams,
        response: { 200: fullRecordAnswer('the full record', { signed: false }), ...problemResponses('NOT_FOUND') },
      },
    },
    async (request, reply) => {
      const tracking = await find(callerOf(request).accountId, request.params.id)
      return reply.type('application/json').send(JSON.stringify(fullRecord(tracking)))
    },
  )

  app.get<{ Params: { id: string } }>(
    '/payments/shopify/:id',
    {
      schema: {
        summary: 'A succeeded Shopify payment of the account (summary record with x-api-version, full record without)',
        tags: ['shopify'],
        params: idParams,
        headers: apiVersionHeaders,
        response: { 200: summaryOrFullAnswer, ...problemResponses('NOT_FOUND') },
      },
    },
    async (request, reply) => {
      const version = apiVersionOf(request)
      const tracking = await find(callerOf(request).accountId, request.params.id)
      return reply.type('application/json').send(JSON.stringify(version ? summaryRecord(tracking) : fullRecord(tracking)))
    },
  )
}
