import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { Clock } from '../../common/clock.ts'
import { createApp, deleteApp, grantApp, listAppGrants, listApps, revokeGrant } from '../../admin/apps.ts'
import { grantRequestFields } from '../../admin/grant-request.ts'
import { appRequestFields } from '../../admin/names.ts'
import { appJson, grantJson } from '../../admin/records.ts'
import type { Db } from '../../store/infrastructure/database.ts'
import { appSchema, createdGrantSchema, grantSchema } from '../account-data-schemas.ts'
import { fieldsSchema } from '../request-schemas.ts'
import { problemSchema } from '../schemas.ts'
import { adminProblem, objectBody } from './admin.ts'

export interface AdminAppsDeps {
  db: Db
  clock: Clock
}

const idParams = (what: string) => Type.Object({ id: Type.String({ description: `${what} id` }) })

/** Apps owned by developer accounts and the grants other accounts give them (docs/api.md §2 and §6). */
export async function adminAppsRoutes(app: FastifyInstance, deps: AdminAppsDeps): Promise<void> {
  app.post<{ Params: { id: string } }>(
    '/admin/accounts/:id/apps',
    {
      schema: {
        summary: 'Create an app owned by the account',
        params: idParams('owning account'),
        body: fieldsSchema(appRequestFields),
        response: { 201: appSchema, '4xx': problemSchema },
      },
    },
    async (request, reply) => {
      const created = await createApp(deps, request.params.id, objectBody(request.body).name)
      if (created.kind !== 'created') throw adminProblem(created)
      return reply.code(201).send(appJson(created.app))
    },
  )

  app.get<{ Params: { id: string } }>(
    '/admin/accounts/:id/apps',
    {
      schema: {
        summary: 'List the apps an account owns',
        params: idParams('account'),
        response: { 200: Type.Array(appSchema), '4xx': problemSchema },
      },
    },
    async (request) => {
      const listed = await listApps(deps, request.params.id)
      if (listed.kind !== 'listed') throw adminProblem(listed)
      return listed.apps.map(appJson)
    },
  )

  app.delete<{ Params: { id: string } }>(
    '/admin/apps/:id',
    {
      schema: {
        summary: 'Delete an app with all its grants (their tokens stop working)',
        params: idParams('app'),
        response: { '4xx': problemSchema },
      },
    },
    async (request, reply) => {
      const deleted = await deleteApp(deps, request.params.id)
      if (deleted.kind !== 'deleted') throw adminProblem(deleted)
      return reply.code(204).send()
    },
  )

  app.post<{ Params: { id: string } }>(
    '/admin/apps/:id/grants',
    {
      schema: {
        summary: 'An account grants the app scopes; answers the access token (shown once)',
        params: idParams('app'),
        body: fieldsSchema(grantRequestFields),
        response: { 201: createdGrantSchema, '4xx': problemSchema },
      },
    },
    async (request, reply) => {
      const body = objectBody(request.body)
      const created = await grantApp(deps, request.params.id, {
        accountId: body.account_id,
        scopes: body.scopes,
        expiresAt: body.expires_at,
      })
      if (created.kind !== 'created') throw adminProblem(created)
      return reply.code(201).send({ ...grantJson(created.grant), access_token: created.accessToken })
    },
  )

  app.get<{ Params: { id: string } }>(
    '/admin/apps/:id/grants',
    {
      schema: {
        summary: "List an app's grants (without tokens)",
        params: idParams('app'),
        response: { 200: Type.Array(grantSchema), '4xx': problemSchema },
      },
    },
    async (request) => {
      const listed = await listAppGrants(deps, request.params.id)
      if (listed.kind !== 'listed') throw adminProblem(listed)
      return listed.grants.map(grantJson)
    },
  )

  app.delete<{ Params: { id: string } }>(
    '/admin/grants/:id',
    {
      schema: {
        summary: 'Revoke a grant: its access token stops working at once',
        params: idParams('grant'),
        response: { '4xx': problemSchema },
      },
    },
    async (request, reply) => {
      const revoked = await revokeGrant(deps, request.params.id)
      if (revoked.kind !== 'revoked') throw adminProblem(revoked)
      return reply.code(204).send()
    },
  )
}
