import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { Clock } from '../../common/clock.ts'
import type { Db } from '../../store/database.ts'
import { listDeliveries, redeliver, type AttemptRow, type DeliveryRow } from '../../store/deliveries.ts'
import { findTrackingBySecret } from '../../store/trackings.ts'
import { callerOf } from '../auth.ts'
import { notFound, problem } from '../problem.ts'
import { problemSchema } from '../schemas.ts'

export interface DeliveryRoutesDeps {
  db: Db
  clock: Clock
  /** A delivery became due now. */
  onScheduled: () => void
}

const iso = (value: Date | string | null): string | null => (value === null ? null : new Date(value).toISOString())

export const attemptJson = (a: AttemptRow) => ({
  attempt: a.attempt,
  started_at: iso(a.started_at),
  duration_ms: a.duration_ms,
  outcome: a.outcome,
  status_code: a.status_code,
  error: a.error,
  response: a.response_excerpt,
})

export const deliveryJson = (d: DeliveryRow) => ({
  id: d.id,
  reason: d.reason,
  state: d.state,
  attempt_count: d.attempts,
  next_attempt_at: d.state === 'due' ? iso(d.next_attempt_at) : null,
  last_attempt_at: iso(d.last_attempt_at),
  last_status_code: d.last_status_code,
  last_error: d.last_error,
  finished_at: iso(d.finished_at),
  created_at: iso(d.created_at),
})

const Nullable = <T extends ReturnType<typeof Type.String | typeof Type.Integer>>(s: T) => Type.Union([s, Type.Null()])
const deliverySchema = Type.Object({
  id: Type.String({ description: 'sent as x-delivery-id on every attempt of this delivery' }),
  reason: Type.String({ description: 'completed or redeliver' }),
  state: Type.String({ description: 'due, delivered (200), accepted (202) or dead' }),
  attempt_count: Type.Integer(),
  next_attempt_at: Nullable(Type.String()),
  last_attempt_at: Nullable(Type.String()),
  last_status_code: Nullable(Type.Integer()),
  last_error: Nullable(Type.String()),
  finished_at: Nullable(Type.String()),
  created_at: Type.String(),
}, { additionalProperties: true })
const attemptSchema = Type.Object({
  attempt: Type.Integer(), started_at: Type.String(), duration_ms: Type.Integer(),
  outcome: Type.String({ description: 'delivered, accepted, failed or refused (SSRF guard)' }),
  status_code: Nullable(Type.Integer()), error: Nullable(Type.String()),
  response: Nullable(Type.String({ description: 'first bytes of the answer' })),
})
const params = { type: 'object', properties: { secret_id: { type: 'string' } }, required: ['secret_id'] } as const

/** Operator tools for callbacks (docs/api.md §4, extensions): the attempt log and redelivery. Behind API key auth. */
export function deliveryRoutes(deps: DeliveryRoutesDeps) {
  return async function deliveriesPlugin(app: FastifyInstance): Promise<void> {
    app.get<{ Params: { secret_id: string } }>('/v2/payments/:secret_id/deliveries', {
      schema: {
        summary: "A payment's callback deliveries, newest first, each with its attempt log",
        tags: ['callbacks'], params,
        response: { 200: Type.Object({ deliveries: Type.Array(Type.Intersect([deliverySchema, Type.Object({ attempts: Type.Array(attemptSchema) })])) }), '4xx': problemSchema },
      },
    }, async (request) => {
      const tracking = await findTrackingBySecret(deps.db, callerOf(request).accountId, request.params.secret_id)
      if (!tracking) throw notFound('payment tracking')
      const deliveries = await listDeliveries(deps.db, tracking.id)
      return { deliveries: deliveries.map((d) => ({ ...deliveryJson(d), attempts: d.attemptLog.map(attemptJson) })) }
    })

    app.post<{ Params: { secret_id: string } }>('/v2/payments/:secret_id/redeliver', {
      schema: {
        summary: "Send a completed payment's callback again, now (202); a delivery still waiting for a retry is brought forward",
        tags: ['callbacks'], params,
        response: { 202: deliverySchema, '4xx': problemSchema },
      },
    }, async (request, reply) => {
      const tracking = await findTrackingBySecret(deps.db, callerOf(request).accountId, request.params.secret_id)
      if (!tracking) throw notFound('payment tracking')
      const outcome = await redeliver(deps.db, tracking.id, deps.clock())
      switch (outcome.kind) {
        case 'not-found':
          throw notFound('payment tracking')
        case 'pending':
          throw problem('CONFLICT', 'the payment is still pending: its callback is sent when it completes')
        case 'no-callback':
          throw problem('CONFLICT', 'the payment has no callback URL')
        case 'scheduled':
          deps.onScheduled()
          return reply.code(202).send(deliveryJson(outcome.delivery))
      }
    })
  }
}
