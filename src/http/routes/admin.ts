import type { FastifyInstance } from 'fastify'
import type { Clock } from '../../common/clock.ts'
import type { NotFound } from '../../admin/admin-deps.ts'
import { createAccount, createApiKey, listAccounts, listApiKeys, revokeApiKey } from '../../admin/accounts.ts'
import { signOutAllDashboardSessions } from '../../admin/dashboard-sessions.ts'
import { accountRequestFields, readRequiredName } from '../../admin/names.ts'
import { accountJson, apiKeyJson } from '../../admin/records.ts'
import type { FieldError } from '../../domain/field-errors.ts'
import type { Db } from '../../store/infrastructure/database.ts'
import { HttpProblem, notFound, validationFailed } from '../problem.ts'
import { fieldsSchema } from '../request-schemas.ts'
import { problemSchema } from '../schemas.ts'
import { accountSchema, apiKeySchema, createdApiKeySchema } from '../admin-schemas.ts'
import { Type } from '@sinclair/typebox'

export interface AdminRoutesDeps {
  db: Db
  clock: Clock
  onKeyRevoked: (keyId: string) => void
  onKeyCreated: (key: string) => void
}

/** Reads a JSON object body of an admin request (or none); anything else is a 400. */
export function objectBody(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {}
  if (typeof body !== 'object' || Array.isArray(body)) throw validationFailed([{ path: '', message: 'the body must be a JSON object' }])
  return body as Record<string, unknown>
}

/** The problem of an admin outcome that is not a success: 404 `<what> not found`, or 400 with the field errors. */
export function adminProblem(outcome: NotFound | { kind: 'invalid'; errors: FieldError[] }): HttpProblem {
  return outcome.kind === 'not-found' ? notFound(outcome.what) : validationFailed(outcome.errors)
}

const idParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const

/** Accounts and API keys (docs/api.md §6). Other subsystems add their admin routes in their own files. */
export async function adminRoutes(app: FastifyInstance, deps: AdminRoutesDeps): Promise<void> {
  app.post(
    '/admin/accounts',
    {
      schema: {
        summary: 'Create an account',
        body: fieldsSchema(accountRequestFields),
        response: { 201: accountSchema, '4xx': problemSchema },
      },
    },
    async (request, reply) => {
      const read = readRequiredName(objectBody(request.body), accountRequestFields)
      if (!read.ok) throw validationFailed(read.errors)
      const created = await createAccount(deps, read.value.name)
      return reply.code(201).send(accountJson(created.account))
    },
  )

  app.get('/admin/accounts', { schema: { summary: 'List accounts', response: { 200: Type.Array(accountSchema) } } }, async () =>
    (await listAccounts(deps)).map(accountJson),
  )

  app.post<{ Params: { id: string } }>(
    '/admin/accounts/:id/api-keys',
    {
      schema: {
        summary: 'Create an API key (shown once)',
        params: idParams,
        response: { 201: createdApiKeySchema, '4xx': problemSchema },
      },
    },
    async (request, reply) => {
      const created = await createApiKey(deps, request.params.id)
      if (created.kind !== 'created') throw adminProblem(created)
      deps.onKeyCreated(created.key.key)
      return reply.code(201).send({ id: created.key.id, key: created.key.key })
    },
  )

  app.get<{ Params: { id: string } }>(
    '/admin/accounts/:id/api-keys',
    {
      schema: {
        summary: "List an account's API keys (without the keys)",
        params: idParams,
        response: { 200: Type.Array(apiKeySchema) },
      },
    },
    async (request) => {
      const listed = await listApiKeys(deps, request.params.id)
      if (listed.kind !== 'listed') throw adminProblem(listed)
      return listed.keys.map(apiKeyJson)
    },
  )

  app.delete<{ Params: { id: string } }>(
    '/admin/api-keys/:id',
    {
      schema: { summary: 'Revoke an API key', params: idParams, response: { '4xx': problemSchema } },
    },
    async (request, reply) => {
      const revoked = await revokeApiKey(deps, request.params.id)
      if (revoked.kind !== 'revoked') throw adminProblem(revoked)
      deps.onKeyRevoked(request.params.id)
      return reply.code(204).send()
    },
  )

  app.delete(
    '/admin/dashboard-sessions',
    {
      schema: {
        summary: 'Sign out all dashboard sessions',
        description: 'Ends every dashboard session on every node: each browser signs in again. Open live streams end within 2 s.',
        response: { '4xx': problemSchema },
      },
    },
    async (request, reply) => {
      const { sessions } = await signOutAllDashboardSessions(deps)
      request.log.info({ sessions }, 'every dashboard session signed out')
      return reply.code(204).send()
    },
  )
}
