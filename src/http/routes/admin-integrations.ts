import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { createIntegration, listIntegrations, showIntegration } from '../../admin/integrations.ts'
import { integrationRequestFields, readIntegrationRequest } from '../../admin/names.ts'
import { integrationJson } from '../../admin/records.ts'
import type { Clock } from '../../common/clock.ts'
import type { Db } from '../../store/infrastructure/database.ts'
import type { KeyPairPem } from '../../store/service-keys.ts'
import { validationFailed } from '../problem.ts'
import { fieldsSchema } from '../request-schemas.ts'
import { problemSchema } from '../schemas.ts'
import { createdIntegrationSchema, integrationSchema } from '../admin-schemas.ts'
import { adminProblem, objectBody } from './admin.ts'

export interface AdminIntegrationsDeps {
  db: Db
  clock: Clock
  generateKeyPair: () => Promise<KeyPairPem>
  /** Seals the new private key in the database when set. */
  secretsKey: Buffer | null
}

const idParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const

/** Integrations (docs/api.md §6): each has its own RSA-2048 key; the private half never leaves the database. */
export async function adminIntegrationRoutes(app: FastifyInstance, deps: AdminIntegrationsDeps): Promise<void> {
  app.post<{ Params: { id: string } }>(
    '/admin/accounts/:id/integrations',
    {
      schema: {
        operationId: 'adminCreateIntegration',
        summary: 'Create an integration with its own callback-signing key and webhook secret; answers {id, public_key, webhook_secret, …}',
        description:
          'Body (optional): {"name": "…", "reversal_events": true}. Trackings that name the integration (integration_id or payload.integration) are signed with its key and its Standard Webhooks secret, which is answered only here.',
        params: idParams,
        body: fieldsSchema(integrationRequestFields),
        response: { 201: createdIntegrationSchema, '4xx': problemSchema },
      },
    },
    async (request, reply) => {
      const read = readIntegrationRequest(objectBody(request.body))
      if (!read.ok) throw validationFailed(read.errors)
      // The service checked the stored keys against its secrets key at start.
      const created = await createIntegration({ ...deps, checkStoredKeys: false }, request.params.id, read.value.name, {
        reversalEvents: read.value.reversalEvents,
      })
      if (created.kind !== 'created') throw adminProblem(created)
      return reply.code(201).send({ ...integrationJson(created.integration), webhook_secret: created.webhookSecret })
    },
  )

  app.get<{ Params: { id: string } }>(
    '/admin/accounts/:id/integrations',
    {
      schema: {
        summary: "List an account's integrations with their public keys",
        params: idParams,
        response: { 200: Type.Array(integrationSchema), '4xx': problemSchema },
      },
    },
    async (request) => {
      const listed = await listIntegrations(deps, request.params.id)
      if (listed.kind !== 'listed') throw adminProblem(listed)
      return listed.integrations.map(integrationJson)
    },
  )

  app.get<{ Params: { id: string } }>(
    '/admin/integrations/:id',
    {
      schema: {
        summary: 'Show an integration and its public key',
        params: idParams,
        response: { 200: integrationSchema, '4xx': problemSchema },
      },
    },
    async (request) => {
      const shown = await showIntegration(deps, request.params.id)
      if (shown.kind !== 'found') throw adminProblem(shown)
      return integrationJson(shown.integration)
    },
  )
}
