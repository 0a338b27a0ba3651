import { timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Clock } from '../../common/clock.ts'
import type { Db } from '../../store/database.ts'
import { createAccount, findAccount, listAccounts } from '../../store/accounts.ts'
import { createApiKey, listApiKeys, revokeApiKey } from '../../store/api-keys.ts'
import { HttpProblem, notFound, validationFailed } from '../problem.ts'
import { problemSchema } from '../schemas.ts'
import { noRoute, problem } from '../problem.ts'

export interface AdminRoutesDeps {
  db: Db
  clock: Clock
  adminToken: string | null
  onKeyRevoked: (keyId: string) => void
  onKeyCreated: (key: string) => void
}

/** Checks `Authorization: Bearer $PAYWATCH_ADMIN_TOKEN`; without a configured token the admin API does not exist. */
export function adminGuard(adminToken: string | null) {
  const expected = adminToken ? Buffer.from(adminToken) : null
  return async (request: FastifyRequest): Promise<void> => {
    if (!expected) throw noRoute(request.method, request.url)
    const header = request.headers.authorization ?? ''
    const given = Buffer.from(header.startsWith('Bearer ') ? header.slice(7) : '')
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw problem('UNAUTHORIZED', 'send the admin token as Authorization: Bearer <PAYWATCH_ADMIN_TOKEN>')
    }
  }
}

/** Reads a JSON object body of an admin request (or none); anything else is a 400. */
export function objectBody(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {}
  if (typeof body !== 'object' || Array.isArray(body)) throw validationFailed([{ path: '', message: 'the body must be a JSON object' }])
  return body as Record<string, unknown>
}

export function requireName(body: Record<string, unknown>, key = 'name'): string {
  const name = body[key]
  if (typeof name !== 'string' || name.trim() === '' || name.length > 200) {
    throw validationFailed([{ path: key, message: 'is required: a string of 1 to 200 characters' }])
  }
  return name.trim()
}

export async function requireAccount(db: Db, id: string): Promise<void> {
  if (!(await findAccount(db, id))) throw notFound('account')
}

const tags = ['admin']
const security = [{ adminToken: [] }]
const idParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const

/** Accounts and API keys (docs/api.md §6). Other subsystems add their admin routes in their own files. */
export async function adminRoutes(app: FastifyInstance, deps: AdminRoutesDeps): Promise<void> {
  app.addHook('onRequest', adminGuard(deps.adminToken))

  app.post('/admin/accounts', {
    schema: { summary: 'Create an account', tags, security, response: { '4xx': problemSchema } },
  }, async (request, reply) => {
    const account = await createAccount(deps.db, requireName(objectBody(request.body)))
    return reply.code(201).send({ id: account.id, name: account.name, created_at: account.createdAt.toISOString() })
  })

  app.get('/admin/accounts', { schema: { summary: 'List accounts', tags, security } }, async () =>
    (await listAccounts(deps.db)).map((a) => ({ id: a.id, name: a.name, created_at: a.createdAt.toISOString() })),
  )

  app.post<{ Params: { id: string } }>('/admin/accounts/:id/api-keys', {
    schema: { summary: 'Create an API key (shown once)', tags, security, params: idParams, response: { '4xx': problemSchema } },
  }, async (request, reply) => {
    await requireAccount(deps.db, request.params.id)
    const created = await createApiKey(deps.db, request.params.id)
    deps.onKeyCreated(created.key)
    return reply.code(201).send({ id: created.id, key: created.key })
  })

  app.get<{ Params: { id: string } }>('/admin/accounts/:id/api-keys', {
    schema: { summary: "List an account's API keys (without the keys)", tags, security, params: idParams },
  }, async (request) => {
    await requireAccount(deps.db, request.params.id)
    return (await listApiKeys(deps.db, request.params.id)).map((k) => ({
      id: k.id, prefix: k.prefix, created_at: k.createdAt.toISOString(), revoked_at: k.revokedAt?.toISOString() ?? null,
    }))
  })

  app.delete<{ Params: { id: string } }>('/admin/api-keys/:id', {
    schema: { summary: 'Revoke an API key', tags, security, params: idParams, response: { '4xx': problemSchema } },
  }, async (request, reply) => {
    if (!(await revokeApiKey(deps.db, request.params.id, deps.clock()))) throw notFound('API key')
    deps.onKeyRevoked(request.params.id)
    return reply.code(204).send()
  })
}
