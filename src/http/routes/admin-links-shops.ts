import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { Clock } from '../../common/clock.ts'
import { createLink, listLinks, removeLink } from '../../admin/links.ts'
import { linkRequestFields, readOptionalName } from '../../admin/names.ts'
import { linkJson, shopJson } from '../../admin/records.ts'
import { connectShop, disconnectShop, listShops, shopRequestFields } from '../../admin/shops.ts'
import type { Db } from '../../store/infrastructure/database.ts'
import { connectedShopSchema, linkSchema } from '../account-data-schemas.ts'
import { validationFailed } from '../problem.ts'
import { fieldsSchema } from '../request-schemas.ts'
import { problemSchema } from '../schemas.ts'
import { adminProblem, objectBody } from './admin.ts'

export interface AdminLinksShopsDeps {
  db: Db
  clock: Clock
}

const accountParams = Type.Object({ id: Type.String({ description: 'account id' }) })

/** Payment links and connected shops of an account (docs/api.md §6). */
export async function adminLinksShopsRoutes(app: FastifyInstance, deps: AdminLinksShopsDeps): Promise<void> {
  app.post<{ Params: { id: string } }>(
    '/admin/accounts/:id/links',
    {
      schema: {
        summary: 'Create a payment link',
        params: accountParams,
        body: fieldsSchema(linkRequestFields),
        response: { 201: linkSchema, '4xx': problemSchema },
      },
    },
    async (request, reply) => {
      const read = readOptionalName(objectBody(request.body), linkRequestFields)
      if (!read.ok) throw validationFailed(read.errors)
      const created = await createLink(deps, request.params.id, read.value.name)
      if (created.kind !== 'created') throw adminProblem(created)
      return reply.code(201).send(linkJson(created.link))
    },
  )

  app.get<{ Params: { id: string } }>(
    '/admin/accounts/:id/links',
    {
      schema: {
        summary: "List an account's payment links",
        params: accountParams,
        response: { 200: Type.Array(linkSchema), '4xx': problemSchema },
      },
    },
    async (request) => {
      const listed = await listLinks(deps, request.params.id)
      if (listed.kind !== 'listed') throw adminProblem(listed)
      return listed.links.map(linkJson)
    },
  )

  app.delete<{ Params: { id: string } }>(
    '/admin/links/:id',
    {
      schema: {
        summary: 'Remove a payment link (it takes no new payments; its payments are no longer listed)',
        params: Type.Object({ id: Type.String({ description: 'link id' }) }),
        response: { '4xx': problemSchema },
      },
    },
    async (request, reply) => {
      const removed = await removeLink(deps, request.params.id)
      if (removed.kind !== 'removed') throw adminProblem(removed)
      return reply.code(204).send()
    },
  )

  app.post<{ Params: { id: string } }>(
    '/admin/accounts/:id/shops',
    {
      schema: {
        summary: 'Connect a shop (host name) to an account; 200 when it was connected already',
        params: accountParams,
        body: fieldsSchema(shopRequestFields),
        response: { 200: connectedShopSchema, 201: connectedShopSchema, '4xx': problemSchema },
      },
    },
    async (request, reply) => {
      const connected = await connectShop(deps, request.params.id, objectBody(request.body).shop)
      if (connected.kind !== 'connected') throw adminProblem(connected)
      return reply.code(connected.created ? 201 : 200).send(shopJson(connected.shop))
    },
  )

  app.get<{ Params: { id: string } }>(
    '/admin/accounts/:id/shops',
    {
      schema: {
        summary: "List an account's connected shops",
        params: accountParams,
        response: { 200: Type.Array(connectedShopSchema), '4xx': problemSchema },
      },
    },
    async (request) => {
      const listed = await listShops(deps, request.params.id)
      if (listed.kind !== 'listed') throw adminProblem(listed)
      return listed.shops.map(shopJson)
    },
  )

  app.delete<{ Params: { id: string; shop: string } }>(
    '/admin/accounts/:id/shops/:shop',
    {
      schema: {
        summary: 'Disconnect a shop (its past payments stay readable)',
        params: Type.Object({ id: Type.String({ description: 'account id' }), shop: Type.String({ description: 'shop host name' }) }),
        response: { '4xx': problemSchema },
      },
    },
    async (request, reply) => {
      const disconnected = await disconnectShop(deps, request.params.id, request.params.shop)
      if (disconnected.kind !== 'disconnected') throw adminProblem(disconnected)
      return reply.code(204).send()
    },
  )
}
