import type { FastifyInstance, FastifyReply } from 'fastify'
import { asciiJson } from '../../domain/ascii-json.ts'
import { parsePaymentRequest, secretPattern } from '../../domain/payment-request.ts'
import { type Tracking } from '../../domain/tracking.ts'
import { fullRecord } from '../../domain/records.ts'
import { createPayment, type CreatePaymentDeps } from '../../payments/create-payment.ts'
import type { TrackingEvents } from '../../common/tracking-events.ts'
import { createTrackingBatches } from '../../store/tracking-batches.ts'
import { callerOf } from '../auth.ts'
import { cacheDecorations } from '../record-decorations.ts'
import { chainUnavailable, notFound, problem, unsupportedBlockchain, validationFailed } from '../problem.ts'
import { problemResponses } from '../problem-schemas.ts'
import { readByHand } from '../request-schemas.ts'
import { createPaymentBodySchema, fullRecordAnswer } from '../schemas.ts'
import { callbackAnswers } from '../openapi-webhooks.ts'
import { anyPaymentRecord } from '../openapi-components.ts'

export interface PaymentRoutesDeps extends CreatePaymentDeps {
  events: TrackingEvents
  /** Adds headers to a record response (the signature); given the exact body bytes. Only headers: they are cached per body. */
  decorateRecord?: (tracking: Tracking, body: string, reply: FastifyReply) => Promise<void>
}

export async function paymentRoutes(app: FastifyInstance, routeDeps: PaymentRoutesDeps): Promise<void> {
  // Concurrent creates share insert statements (group commit), concurrent reads share selects.
  const batches = createTrackingBatches(routeDeps.db)
  const deps = { ...routeDeps, insertTracking: routeDeps.insertTracking ?? batches.insert }
  const decorateRecord = deps.decorateRecord && cacheDecorations(deps.decorateRecord)
  const sendRecord = async (reply: FastifyReply, status: number, tracking: Tracking, options: { signed: boolean }) => {
    // Pure ASCII (docs/api.md §4) so that `x-signature` verifies however the client reads the bytes.
    const body = asciiJson(fullRecord(tracking))
    // Only reads are signed (docs/api.md §4): an RSA signature costs more CPU than the rest of a create.
    if (options.signed) await decorateRecord?.(tracking, body, reply)
    return reply.code(status).type('application/json').send(body)
  }

  app.post(
    '/v2/payments',
    {
      schema: {
        operationId: 'createPayment',
        summary: 'Create a payment tracking (idempotent)',
        tags: ['payments'],
        body: createPaymentBodySchema,
        // The record is POSTed to `callback` once the payment is judged (docs/api.md §4); its headers are those of every callback.
        callbacks: {
          paymentCompleted: {
            '{$request.body#/callback}': {
              post: {
                requestBody: { required: true, content: { 'application/json': { schema: anyPaymentRecord } } },
                responses: callbackAnswers,
              },
            },
          },
        },
        response: {
          200: fullRecordAnswer('the tracking of this payment existed already: its record', { signed: false }),
          201: fullRecordAnswer('created: the record, status pending', { signed: false }),
          ...problemResponses('VALIDATION_FAILED', 'UNSUPPORTED_BLOCKCHAIN', 'NOT_FOUND', 'CONFLICT', 'CHAIN_UNAVAILABLE'),
        },
      },
      // The body is read by parsePaymentRequest, which reports every field at once; the schema is made from its field table.
      validatorCompiler: readByHand,
    },
    async (request, reply) => {
      const parsed = parsePaymentRequest(request.body)
      if (!parsed.ok) throw validationFailed(parsed.errors)
      const outcome = await createPayment(deps, callerOf(request).accountId, parsed.value)
      switch (outcome.kind) {
        case 'created':
          deps.events.emit('tracked', outcome.tracking)
          return sendRecord(reply, 201, outcome.tracking, { signed: false })
        case 'existing':
          // A trace that just got its transaction is new work for the engine; a plain repeat is not.
          if (outcome.attached) deps.events.emit('tracked', outcome.tracking)
          return sendRecord(reply, 200, outcome.tracking, { signed: false })
        case 'conflict':
          throw problem('CONFLICT', outcome.detail)
        case 'invalid':
          throw validationFailed(outcome.errors)
        case 'unsupported-chain':
          throw unsupportedBlockchain(parsed.value.blockchain)
        case 'chain-unavailable':
          throw chainUnavailable()
        case 'not-found':
          throw problem('NOT_FOUND', outcome.detail)
      }
    },
  )

  app.get<{ Params: { secret_id: string } }>(
    '/v2/payments/:secret_id',
    {
      schema: {
        operationId: 'getPayment',
        summary: 'Read a payment tracking by its secret_id (or earlier uuid)',
        tags: ['payments'],
        params: { type: 'object', properties: { secret_id: { type: 'string' } }, required: ['secret_id'] },
        response: { 200: fullRecordAnswer('the record, signed', { signed: true }), ...problemResponses('NOT_FOUND') },
      },
    },
    async (request, reply) => {
      const secretId = request.params.secret_id
      // A string no create accepts as secret_id or uuid cannot be stored: no query for it.
      const tracking = secretPattern.test(secretId) ? await batches.findBySecret(callerOf(request).accountId, secretId) : undefined
      if (!tracking) throw notFound('payment tracking')
      return sendRecord(reply, 200, tracking, { signed: true })
    },
  )
}
