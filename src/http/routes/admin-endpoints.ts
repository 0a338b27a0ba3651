import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { listAllEndpoints, listEndpoints, type EndpointDeps } from '../../admin/endpoints.ts'
import { accountEndpointJson, endpointJson } from '../../admin/records.ts'
import { rotateAccountWebhookSecret, type WebhookSecretDeps } from '../../admin/webhook-secrets.ts'
import { endpointRecoverRequestFields, endpointRequestFields } from '../../domain/endpoint-request.ts'
import { problemResponses } from '../problem-schemas.ts'
import { fieldsSchema } from '../request-schemas.ts'
import { adminProblem } from './admin.ts'
import { endpointActions } from './endpoint-actions.ts'
import { endpointSchema } from './endpoints.ts'

export interface AdminEndpointsDeps extends EndpointDeps, WebhookSecretDeps {}

const idParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const

/** The account's webhook secret and every account's callback endpoints, for the operator (docs/api.md §8). */
export async function adminEndpointRoutes(app: FastifyInstance, deps: AdminEndpointsDeps): Promise<void> {
  const actions = endpointActions(deps)

  app.post<{ Params: { id: string } }>(
    '/admin/accounts/:id/webhook-secret',
    {
      schema: {
        operationId: 'adminRotateWebhookSecret',
        summary:
          "Create or rotate the account's Standard Webhooks secret (callbacks without an integration); the previous one signs 24 h more",
        params: idParams,
        response: { 201: Type.Object({ webhook_secret: Type.String() }), ...problemResponses('NOT_FOUND') },
      },
    },
    async (request, reply) => {
      const rotated = await rotateAccountWebhookSecret(deps, request.params.id)
      if (rotated.kind !== 'rotated') throw adminProblem(rotated)
      return reply.code(201).send({ webhook_secret: rotated.webhookSecret })
    },
  )

  app.get(
    '/admin/endpoints',
    {
      schema: {
        operationId: 'adminListAllEndpoints',
        summary: "Every account's callback endpoints with their health",
        response: { 200: Type.Array(Type.Intersect([Type.Object({ account_id: Type.String() }), endpointSchema])), ...problemResponses() },
      },
    },
    async () => (await listAllEndpoints(deps)).endpoints.map(accountEndpointJson),
  )

  app.get<{ Params: { id: string } }>(
    '/admin/accounts/:id/endpoints',
    {
      schema: {
        operationId: 'adminListEndpoints',
        summary: "An account's callback endpoints with their health",
        params: idParams,
        response: { 200: Type.Array(endpointSchema), ...problemResponses('NOT_FOUND') },
      },
    },
    async (request) => {
      const listed = await listEndpoints(deps, request.params.id)
      if (listed.kind !== 'listed') throw adminProblem(listed)
      return listed.endpoints.map(endpointJson)
    },
  )

  app.post<{ Params: { id: string } }>(
    '/admin/accounts/:id/endpoints/enable',
    {
      schema: {
        operationId: 'adminEnableEndpoint',
        summary: "Enable an account's endpoint; its waiting deliveries go out now",
        params: idParams,
        body: fieldsSchema(endpointRequestFields),
        response: { 200: endpointSchema, ...problemResponses('VALIDATION_FAILED', 'NOT_FOUND') },
      },
    },
    async (request) => actions.enable(request.params.id, request.body),
  )

  app.post<{ Params: { id: string } }>(
    '/admin/accounts/:id/endpoints/recover',
    {
      schema: {
        operationId: 'adminRecoverEndpoint',
        summary: "Send again every delivery to an account's endpoint whose last attempt failed, or that died, since `since`",
        params: idParams,
        body: fieldsSchema(endpointRecoverRequestFields),
        response: { 202: Type.Object({ redelivered: Type.Integer() }), ...problemResponses('VALIDATION_FAILED', 'NOT_FOUND') },
      },
    },
    async (request, reply) => reply.code(202).send(await actions.recover(request.params.id, request.body)),
  )

  app.post<{ Params: { id: string } }>(
    '/admin/accounts/:id/endpoints/test',
    {
      schema: {
        operationId: 'adminTestEndpoint',
        summary: "Send one signed test event to an account's endpoint url",
        params: idParams,
        body: fieldsSchema(endpointRequestFields),
        response: { 202: Type.Object({ id: Type.String() }), ...problemResponses('VALIDATION_FAILED', 'NOT_FOUND') },
      },
    },
    async (request, reply) => reply.code(202).send(await actions.test(request.params.id, request.body)),
  )
}
