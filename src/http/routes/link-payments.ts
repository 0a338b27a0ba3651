import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { earlierLinkRecord, LINK_PAYMENTS_PAGE_SIZE, linkPaymentsQueryFields, parseLinkPaymentsQuery } from '../../domain/link-payment.ts'
import { summaryRecord } from '../../domain/records.ts'
import type { Db } from '../../store/infrastructure/database.ts'
import { findAccountLink, linkPayments } from '../../store/links.ts'
import { apiVersionHeaders } from '../account-data-schemas.ts'
import { componentRef } from '../problem-schemas.ts'
import { recordAnswer } from '../schemas.ts'
import { apiVersionOf } from '../api-version.ts'
import { callerOf } from '../auth.ts'
import { notFound, validationFailed } from '../problem.ts'
import { problemResponses } from '../problem-schemas.ts'
import { fieldsSchema, readByHand } from '../request-schemas.ts'

/** GET /links/{link_id}/payments (docs/api.md §5). */
export async function linkPaymentRoutes(app: FastifyInstance, deps: { db: Db }): Promise<void> {
  app.get<{ Params: { link_id: string } }>(
    '/links/:link_id/payments',
    {
      schema: {
        summary: 'Succeeded payments received through a payment link, oldest first, at most 10',
        description:
          'Page with `after` = the `confirmed_at` of the last payment received: payments confirmed strictly later follow, none skipped or repeated.',
        tags: ['links'],
        params: Type.Object({ link_id: Type.String() }),
        querystring: fieldsSchema(linkPaymentsQueryFields),
        headers: apiVersionHeaders,
        response: {
          200: recordAnswer(
            'summary records with x-api-version; earlier link payment records without',
            Type.Union([Type.Array(componentRef('PaymentSummary')), Type.Array(componentRef('EarlierLinkPayment'))]),
            { signed: false },
          ),
          ...problemResponses('VALIDATION_FAILED', 'NOT_FOUND'),
        },
      },
      // Read by parseLinkPaymentsQuery (`after` gets one clear problem); x-api-version is checked for every API route.
      validatorCompiler: readByHand,
    },
    async (request, reply) => {
      const version = apiVersionOf(request)
      const query = parseLinkPaymentsQuery(request.query)
      if (!query.ok) throw validationFailed(query.errors)
      const { after } = query.value
      const accountId = callerOf(request).accountId
      if (!(await findAccountLink(deps.db, accountId, request.params.link_id))) throw notFound('link')
      const payments = await linkPayments(deps.db, request.params.link_id, after, LINK_PAYMENTS_PAGE_SIZE)
      const records = payments.map(version ? summaryRecord : earlierLinkRecord)
      return reply.type('application/json').send(JSON.stringify(records))
    },
  )
}
