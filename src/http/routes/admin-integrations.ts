import type { FastifyInstance } from 'fastify'
import type { Db } from '../../store/database.ts'
import { createIntegration, findIntegration, listIntegrations, type Integration } from '../../store/integrations.ts'
import type { KeyPairPem } from '../../store/service-keys.ts'
import { notFound, validationFailed } from '../problem.ts'
import { problemSchema } from '../schemas.ts'
import { adminGuard, objectBody, requireAccount } from './admin.ts'

export interface AdminIntegrationsDeps {
  db: Db
  adminToken: string | null
  generateKeyPair: () => Promise<KeyPairPem>
  /** Seals the new private key in the database when set. */
  secretsKey: Buffer | null
}

export const integrationJson = (i: Integration) => ({
  id: i.id, account_id: i.accountId, name: i.name, public_key: i.publicKeyPem, created_at: i.createdAt.toISOString(),
})

const tags = ['admin']
const security = [{ adminToken: [] }]
const idParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const

/** Integrations (docs/api.md §6): each has its own RSA-2048 key; the private half never leaves the database. */
export async function adminIntegrationRoutes(app: FastifyInstance, deps: AdminIntegrationsDeps): Promise<void> {
  app.addHook('onRequest', adminGuard(deps.adminToken))

  app.post<{ Params: { id: string } }>('/admin/accounts/:id/integrations', {
    schema: {
      summary: 'Create an integration with its own callback-signing key; answers {id, public_key}',
      description: 'Body (optional): {"name": "…"}. Trackings that name the integration (integration_id or payload.integration) are signed with its key.',
      tags, security, params: idParams, response: { '4xx': problemSchema },
    },
  }, async (request, reply) => {
    const body = objectBody(request.body)
    const name = body.name
    if (name !== undefined && name !== null && (typeof name !== 'string' || name.length > 200)) {
      throw validationFailed([{ path: 'name', message: 'must be a string of at most 200 characters' }])
    }
    await requireAccount(deps.db, request.params.id)
    const integration = await createIntegration(deps.db, request.params.id, typeof name === 'string' && name.trim() ? name.trim() : null, await deps.generateKeyPair(), deps.secretsKey)
    return reply.code(201).send(integrationJson(integration))
  })

  app.get<{ Params: { id: string } }>('/admin/accounts/:id/integrations', {
    schema: { summary: "List an account's integrations with their public keys", tags, security, params: idParams, response: { '4xx': problemSchema } },
  }, async (request) => {
    await requireAccount(deps.db, request.params.id)
    return (await listIntegrations(deps.db, request.params.id)).map(integrationJson)
  })

  app.get<{ Params: { id: string } }>('/admin/integrations/:id', {
    schema: { summary: 'Show an integration and its public key', tags, security, params: idParams, response: { '4xx': problemSchema } },
  }, async (request) => {
    const integration = await findIntegration(deps.db, request.params.id)
    if (!integration) throw notFound('integration')
    return integrationJson(integration)
  })
}
