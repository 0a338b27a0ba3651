import type { FastifyInstance, FastifyReply } from 'fastify'
import { asciiJson } from '../../domain/ascii-json.ts'
import { parseReleaseRequest, releaseRequestFields } from '../../domain/release-request.ts'
import { type Tracking } from '../../domain/tracking.ts'
import { fullRecord } from '../../domain/records.ts'
import { releasePayment, type ReleasePaymentDeps } from '../../payments/release-payment.ts'
import { callerOf } from '../auth.ts'
import { notFound, problem, unsupportedBlockchain, validationFailed } from '../problem.ts'
import { problemResponses } from '../problem-schemas.ts'
import { fieldsSchema, readByHand } from '../request-schemas.ts'
import { fullRecordAnswer } from '../schemas.ts'

export interface ReleaseRoutesDeps extends ReleasePaymentDeps {
  /** Whether this service tracks the chain: a release naming another one is a 400, not a 404. */
  isTrackedChain(blockchain: string): boolean
  /** Adds headers to a record response (the signature); given the exact body bytes. */
  decorateRecord?: (tracking: Tracking, body: string, reply: FastifyReply) => Promise<void>
}

/** POST /v2/payments/release (docs/api.md §4); registered behind API key auth. */
export function releaseRoutes(deps: ReleaseRoutesDeps) {
  return async function releasePlugin(app: FastifyInstance): Promise<void> {
    app.post(
      '/v2/payments/release',
      {
        schema: {
          operationId: 'releasePayment',
          summary: 'Release the waiting user of a completed payment (after a 202 callback answer); idempotent',
          tags: ['payments'],
          body: fieldsSchema(releaseRequestFields),
          response: {
            200: fullRecordAnswer('released (or released already): the record, signed', { signed: true }),
            ...problemResponses('VALIDATION_FAILED', 'UNSUPPORTED_BLOCKCHAIN', 'NOT_FOUND', 'CONFLICT'),
          },
        },
        // parseReleaseRequest reads the body and reports every field at once; the schema is made from its field table.
        validatorCompiler: readByHand,
      },
      async (request, reply) => {
        const parsed = parseReleaseRequest(request.body)
        if (!parsed.ok) throw validationFailed(parsed.errors)
        const outcome = await releasePayment(deps, callerOf(request).accountId, parsed.value)
        switch (outcome.kind) {
          case 'released':
          case 'already-released': {
            // The same bytes as GET /v2/payments/{secret_id}: pure ASCII, signed as sent.
            const body = asciiJson(fullRecord(outcome.tracking))
            await deps.decorateRecord?.(outcome.tracking, body, reply)
            return reply.code(200).type('application/json').send(body)
          }
          case 'pending':
            throw problem('CONFLICT', 'the payment is still pending; release it once its status is success or failed')
          case 'not-found':
            // Only when nothing matched: a chain no longer configured does not stop its completed payments' release.
            if (!deps.isTrackedChain(parsed.value.blockchain)) throw unsupportedBlockchain(parsed.value.blockchain)
            throw notFound('payment tracking with these fields')
        }
      },
    )
  }
}
