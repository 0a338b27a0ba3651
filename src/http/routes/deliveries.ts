import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { Clock } from '../../common/clock.ts'
import { listPaymentDeliveries, redeliverCallback } from '../../admin/deliveries.ts'
import { deliveryJson, deliveryWithAttemptsJson } from '../../admin/records.ts'
import type { Db } from '../../store/infrastructure/database.ts'
import { callerOf } from '../auth.ts'
import { notFound, problem } from '../problem.ts'
import { problemSchema } from '../schemas.ts'

export interface DeliveryRoutesDeps {
  db: Db
  clock: Clock
  /** A delivery became due now. */
  onScheduled: () => void
}

const Nullable = <T extends ReturnType<typeof Type.String | typeof Type.Integer>>(s: T) => Type.Union([s, Type.Null()])
const deliverySchema = Type.Object(
  {
    id: Type.String({ description: 'sent as x-delivery-id on every attempt of this delivery' }),
    reason: Type.String({ description: 'completed, redeliver, or event (a reversal event, docs/api.md §8)' }),
    state: Type.String({ description: 'due, delivered (200), accepted (202), dead, or skipped (an event without the opt-in, never sent)' }),
    event: Type.Optional(Type.String({ description: 'only on event deliveries: payment.reverted or payment.reconfirmed' })),
    attempt_count: Type.Integer(),
    next_attempt_at: Nullable(Type.String()),
    last_attempt_at: Nullable(Type.String()),
    last_status_code: Nullable(Type.Integer()),
    last_error: Nullable(Type.String()),
    finished_at: Nullable(Type.String()),
    created_at: Type.String(),
  },
  { additionalProperties: true },
)
const attemptSchema = Type.Object({
  attempt: Type.Integer(),
  started_at: Type.String(),
  duration_ms: Type.Integer(),
  outcome: Type.String({ description: 'delivered, accepted, failed or refused (SSRF guard)' }),
  status_code: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  response: Nullable(Type.String({ description: 'first bytes of the answer' })),
})
const params = { type: 'object', properties: { secret_id: { type: 'string' } }, required: ['secret_id'] } as const

/** Operator tools for callbacks (docs/api.md §4, extensions): the attempt log and redelivery. Behind API key auth. */
export function deliveryRoutes(deps: DeliveryRoutesDeps) {
  return async function deliveriesPlugin(app: FastifyInstance): Promise<void> {
    app.get<{ Params: { secret_id: string } }>(
      '/v2/payments/:secret_id/deliveries',
      {
        schema: {
          operationId: 'listPaymentDeliveries',
          summary: "A payment's callback deliveries, newest first, each with its attempt log",
          tags: ['callbacks'],
          params,
          response: {
            200: Type.Object({
              deliveries: Type.Array(Type.Intersect([deliverySchema, Type.Object({ attempts: Type.Array(attemptSchema) })])),
            }),
            '4xx': problemSchema,
          },
        },
      },
      async (request) => {
        const listed = await listPaymentDeliveries(deps, callerOf(request).accountId, request.params.secret_id)
        if (listed.kind !== 'listed') throw notFound(listed.what)
        return { deliveries: listed.deliveries.map(deliveryWithAttemptsJson) }
      },
    )

    app.post<{ Params: { secret_id: string } }>(
      '/v2/payments/:secret_id/redeliver',
      {
        schema: {
          operationId: 'redeliverPayment',
          summary: "Send a completed payment's callback again, now (202); a delivery still waiting for a retry is brought forward",
          tags: ['callbacks'],
          params,
          response: { 202: deliverySchema, '4xx': problemSchema },
        },
      },
      async (request, reply) => {
        const outcome = await redeliverCallback(deps, callerOf(request).accountId, request.params.secret_id, 'api')
        switch (outcome.kind) {
          case 'not-found':
            throw notFound(outcome.what)
          case 'pending':
            throw problem('CONFLICT', 'the payment is still pending: its callback is sent when it completes')
          case 'no-callback':
            throw problem('CONFLICT', 'the payment has no callback URL')
          case 'scheduled':
            return reply.code(202).send(deliveryJson(outcome.delivery))
        }
      },
    )
  }
}
