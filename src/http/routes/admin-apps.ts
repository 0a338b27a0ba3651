import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { Clock } from '../../common/clock.ts'
import { ACCEPTED_SCOPE_NAMES, parseScopes } from '../../domain/app-scopes.ts'
import type { FieldError } from '../../domain/field-errors.ts'
import { parseIsoTimestamp } from '../../domain/iso-timestamp.ts'
import type { Db } from '../../store/database.ts'
import { createGrant, listGrants, revokeGrant, type AppGrant } from '../../store/app-grants.ts'
import { createApp, deleteApp, findApp, listApps, type App } from '../../store/apps.ts'
import { appSchema, createdGrantSchema, grantSchema } from '../account-data-schemas.ts'
import { notFound, validationFailed } from '../problem.ts'
import { problemSchema } from '../schemas.ts'
import { adminGuard, objectBody, requireAccount, requireName } from './admin.ts'

export interface AdminAppsDeps {
  db: Db
  clock: Clock
  adminToken: string | null
}

const tags = ['admin']
const security = [{ adminToken: [] }]
const idParams = (what: string) => Type.Object({ id: Type.String({ description: `${what} id` }) })
/** Bodies are read by hand (every field problem at once); the schemas document them. */
const readByHand = () => () => true

export const appJson = (app: App) => ({ id: app.id, account_id: app.accountId, name: app.name, created_at: app.createdAt.toISOString() })
export const grantJson = (g: AppGrant) => ({
  id: g.id, app_id: g.appId, account_id: g.accountId, scopes: g.scopes, created_at: g.createdAt.toISOString(),
  expires_at: g.expiresAt?.toISOString() ?? null, revoked_at: g.revokedAt?.toISOString() ?? null,
})

/** Reads a grant request: `{account_id, scopes, expires_at?}`; expiry must lie in the future. */
export function readGrantRequest(body: Record<string, unknown>, now: Date): { accountId: string; scopes: string[]; expiresAt: Date | null } {
  const errors: FieldError[] = []
  const accountId = body.account_id
  if (typeof accountId !== 'string' || accountId === '' || accountId.length > 128) errors.push({ path: 'account_id', message: 'is required: the id of the granting account' })
  const scopes = parseScopes(body.scopes)
  if (!scopes.ok) errors.push({ path: 'scopes', message: scopes.message })
  let expiresAt: Date | null = null
  if (body.expires_at !== undefined && body.expires_at !== null) {
    const parsed = typeof body.expires_at === 'string' ? parseIsoTimestamp(body.expires_at) : undefined
    if (!parsed) errors.push({ path: 'expires_at', message: 'must be an ISO 8601 timestamp such as "2026-12-31T23:59:59Z"' })
    else if (parsed.getTime() <= now.getTime()) errors.push({ path: 'expires_at', message: 'must lie in the future' })
    else expiresAt = parsed
  }
  if (errors.length > 0 || !scopes.ok) throw validationFailed(errors)
  return { accountId: accountId as string, scopes: scopes.scopes, expiresAt }
}

/** Apps owned by developer accounts and the grants other accounts give them (docs/api.md §2 and §6). */
export async function adminAppsRoutes(app: FastifyInstance, deps: AdminAppsDeps): Promise<void> {
  app.addHook('onRequest', adminGuard(deps.adminToken))

  app.post<{ Params: { id: string } }>('/admin/accounts/:id/apps', {
    schema: {
      summary: 'Create an app owned by the account', tags, security, params: idParams('owning account'),
      body: Type.Object({ name: Type.String() }, { required: ['name'] }),
      response: { 201: appSchema, '4xx': problemSchema },
    },
    validatorCompiler: readByHand,
  }, async (request, reply) => {
    const name = requireName(objectBody(request.body))
    await requireAccount(deps.db, request.params.id)
    return reply.code(201).send(appJson(await createApp(deps.db, request.params.id, name)))
  })

  app.get<{ Params: { id: string } }>('/admin/accounts/:id/apps', {
    schema: { summary: 'List the apps an account owns', tags, security, params: idParams('account'), response: { 200: Type.Array(appSchema), '4xx': problemSchema } },
  }, async (request) => {
    await requireAccount(deps.db, request.params.id)
    return (await listApps(deps.db, request.params.id)).map(appJson)
  })

  app.delete<{ Params: { id: string } }>('/admin/apps/:id', {
    schema: { summary: 'Delete an app with all its grants (their tokens stop working)', tags, security, params: idParams('app'), response: { '4xx': problemSchema } },
  }, async (request, reply) => {
    if (!(await deleteApp(deps.db, request.params.id))) throw notFound('app')
    return reply.code(204).send()
  })

  app.post<{ Params: { id: string } }>('/admin/apps/:id/grants', {
    schema: {
      summary: 'An account grants the app scopes; answers the access token (shown once)', tags, security, params: idParams('app'),
      body: Type.Object({
        account_id: Type.String({ description: 'the granting account, whose data the app will read' }),
        scopes: Type.Array(Type.String({ enum: [...ACCEPTED_SCOPE_NAMES] }), { minItems: 1 }),
        expires_at: Type.Optional(Type.String({ format: 'date-time', description: 'ISO 8601; the token stops working then' })),
      }, { required: ['account_id', 'scopes'] }),
      response: { 201: createdGrantSchema, '4xx': problemSchema },
    },
    validatorCompiler: readByHand,
  }, async (request, reply) => {
    const grant = readGrantRequest(objectBody(request.body), deps.clock())
    if (!(await findApp(deps.db, request.params.id))) throw notFound('app')
    await requireAccount(deps.db, grant.accountId)
    const created = await createGrant(deps.db, { appId: request.params.id, ...grant })
    return reply.code(201).send({ ...grantJson(created.grant), access_token: created.accessToken })
  })

  app.get<{ Params: { id: string } }>('/admin/apps/:id/grants', {
    schema: { summary: "List an app's grants (without tokens)", tags, security, params: idParams('app'), response: { 200: Type.Array(grantSchema), '4xx': problemSchema } },
  }, async (request) => {
    if (!(await findApp(deps.db, request.params.id))) throw notFound('app')
    return (await listGrants(deps.db, request.params.id)).map(grantJson)
  })

  app.delete<{ Params: { id: string } }>('/admin/grants/:id', {
    schema: { summary: 'Revoke a grant: its access token stops working at once', tags, security, params: idParams('grant'), response: { '4xx': problemSchema } },
  }, async (request, reply) => {
    if (!(await revokeGrant(deps.db, request.params.id, deps.clock()))) throw notFound('grant')
    return reply.code(204).send()
  })
}
