import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { listEndpoints, type EndpointDeps } from '../../admin/endpoints.ts'
import { endpointJson } from '../../admin/records.ts'
import { endpointRecoverRequestFields, endpointRequestFields } from '../../domain/endpoint-request.ts'
import { callerOf } from '../auth.ts'
import { notFound } from '../problem.ts'
import { problemResponses } from '../problem-schemas.ts'
import { fieldsSchema, readByHand } from '../request-schemas.ts'
import { endpointActions } from './endpoint-actions.ts'

const Nullable = <T extends ReturnType<typeof Type.String>>(s: T) => Type.Union([s, Type.Null()])
export const endpointSchema = Type.Object({
  url: Type.String({ description: 'scheme://host[:port]' }),
  state: Type.Union([Type.Literal('active'), Type.Literal('disabled')]),
  disabled_reason: Nullable(Type.String()),
  failing_since: Nullable(Type.String({ description: 'first failed attempt since the last success (ISO 8601)' })),
  last_success_at: Nullable(Type.String()),
  pending_deliveries: Type.Integer({ description: 'deliveries waiting to be sent (paused ones included)' }),
})
const tags = ['endpoints']

/** Callback endpoints of the caller's account (docs/api.md §8); registered behind API key auth. */
export function endpointRoutes(deps: EndpointDeps) {
  const actions = endpointActions(deps)
  return async function endpointsPlugin(app: FastifyInstance): Promise<void> {
    app.get(
      '/v2/endpoints',
      {
        schema: {
          operationId: 'listEndpoints',
          summary: "The account's callback endpoints (scheme://host[:port]) with their health",
          tags,
          response: { 200: Type.Array(endpointSchema), ...problemResponses('NOT_FOUND') },
        },
      },
      async (request) => {
        const listed = await listEndpoints(deps, callerOf(request).accountId)
        if (listed.kind !== 'listed') throw notFound(listed.what)
        return listed.endpoints.map(endpointJson)
      },
    )

    app.post(
      '/v2/endpoints/enable',
      {
        schema: {
          operationId: 'enableEndpoint',
          summary: 'Enable an endpoint; its waiting deliveries go out now',
          tags,
          body: fieldsSchema(endpointRequestFields),
          response: { 200: endpointSchema, ...problemResponses('VALIDATION_FAILED', 'NOT_FOUND') },
        },
        validatorCompiler: readByHand,
      },
      async (request) => actions.enable(callerOf(request).accountId, request.body),
    )

    app.post(
      '/v2/endpoints/recover',
      {
        schema: {
          operationId: 'recoverEndpoint',
          summary: 'Send again every delivery to the endpoint whose last attempt failed, or that died, since `since`',
          tags,
          body: fieldsSchema(endpointRecoverRequestFields),
          response: {
            202: Type.Object({ redelivered: Type.Integer({ description: 'deliveries sent again' }) }),
            ...problemResponses('VALIDATION_FAILED', 'NOT_FOUND'),
          },
        },
        validatorCompiler: readByHand,
      },
      async (request, reply) => reply.code(202).send(await actions.recover(callerOf(request).accountId, request.body)),
    )

    app.post(
      '/v2/endpoints/test',
      {
        schema: {
          operationId: 'testEndpoint',
          summary: 'Send one signed test event {"event":"test","sent_at":…} (header x-paywatch-event: test) to the url',
          tags,
          body: fieldsSchema(endpointRequestFields),
          response: {
            202: Type.Object({ id: Type.String({ description: 'its webhook-id and x-delivery-id' }) }),
            ...problemResponses('VALIDATION_FAILED', 'NOT_FOUND'),
          },
        },
        validatorCompiler: readByHand,
      },
      async (request, reply) => reply.code(202).send(await actions.test(callerOf(request).accountId, request.body)),
    )
  }
}
