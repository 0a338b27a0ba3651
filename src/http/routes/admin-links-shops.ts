import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { Clock } from '../../common/clock.ts'
import { normalizeShopHost, SHOP_HOST_HINT } from '../../domain/shop-host.ts'
import type { Db } from '../../store/database.ts'
import { createLink, listLinks, removeLink, type Link } from '../../store/links.ts'
import { connectShop, disconnectShop, listShops } from '../../store/shops.ts'
import { connectedShopSchema, linkSchema } from '../account-data-schemas.ts'
import { notFound, validationFailed } from '../problem.ts'
import { problemSchema } from '../schemas.ts'
import { adminGuard, objectBody, requireAccount } from './admin.ts'

export interface AdminLinksShopsDeps {
  db: Db
  clock: Clock
  adminToken: string | null
}

const tags = ['admin']
const security = [{ adminToken: [] }]
const accountParams = Type.Object({ id: Type.String({ description: 'account id' }) })
/** Bodies are read by hand (one clear problem per field); the schemas document them. */
const readByHand = () => () => true

export const linkJson = (link: Link) => ({ id: link.id, account_id: link.accountId, name: link.name, created_at: link.createdAt.toISOString() })

/** Payment links and connected shops of an account (docs/api.md §6). */
export async function adminLinksShopsRoutes(app: FastifyInstance, deps: AdminLinksShopsDeps): Promise<void> {
  app.addHook('onRequest', adminGuard(deps.adminToken))

  app.post<{ Params: { id: string } }>('/admin/accounts/:id/links', {
    schema: {
      summary: 'Create a payment link', tags, security, params: accountParams,
      body: Type.Object({ name: Type.Optional(Type.String({ description: 'for operators, up to 200 characters' })) }),
      response: { 201: linkSchema, '4xx': problemSchema },
    },
    validatorCompiler: readByHand,
  }, async (request, reply) => {
    const body = objectBody(request.body)
    const name = body.name ?? null
    if (name !== null && (typeof name !== 'string' || name.length > 200)) {
      throw validationFailed([{ path: 'name', message: 'must be a string of at most 200 characters' }])
    }
    await requireAccount(deps.db, request.params.id)
    const link = await createLink(deps.db, request.params.id, name === null ? null : name.trim() || null)
    return reply.code(201).send(linkJson(link))
  })

  app.get<{ Params: { id: string } }>('/admin/accounts/:id/links', {
    schema: { summary: "List an account's payment links", tags, security, params: accountParams, response: { 200: Type.Array(linkSchema), '4xx': problemSchema } },
  }, async (request) => {
    await requireAccount(deps.db, request.params.id)
    return (await listLinks(deps.db, request.params.id)).map(linkJson)
  })

  app.delete<{ Params: { id: string } }>('/admin/links/:id', {
    schema: {
      summary: 'Remove a payment link (it takes no new payments; its payments are no longer listed)',
      tags, security, params: Type.Object({ id: Type.String({ description: 'link id' }) }), response: { '4xx': problemSchema },
    },
  }, async (request, reply) => {
    if (!(await removeLink(deps.db, request.params.id, deps.clock()))) throw notFound('link')
    return reply.code(204).send()
  })

  app.post<{ Params: { id: string } }>('/admin/accounts/:id/shops', {
    schema: {
      summary: 'Connect a shop (host name) to an account; 200 when it was connected already', tags, security, params: accountParams,
      body: Type.Object({ shop: Type.String({ description: SHOP_HOST_HINT }) }, { required: ['shop'] }),
      response: { 200: connectedShopSchema, 201: connectedShopSchema, '4xx': problemSchema },
    },
    validatorCompiler: readByHand,
  }, async (request, reply) => {
    const shop = normalizeShopHost(objectBody(request.body).shop)
    if (!shop) throw validationFailed([{ path: 'shop', message: `is required: ${SHOP_HOST_HINT}` }])
    await requireAccount(deps.db, request.params.id)
    const connected = await connectShop(deps.db, request.params.id, shop)
    return reply.code(connected.created ? 201 : 200).send({ shop: connected.shop.shop, created_at: connected.shop.createdAt.toISOString() })
  })

  app.get<{ Params: { id: string } }>('/admin/accounts/:id/shops', {
    schema: { summary: "List an account's connected shops", tags, security, params: accountParams, response: { 200: Type.Array(connectedShopSchema), '4xx': problemSchema } },
  }, async (request) => {
    await requireAccount(deps.db, request.params.id)
    return (await listShops(deps.db, request.params.id)).map((s) => ({ shop: s.shop, created_at: s.createdAt.toISOString() }))
  })

  app.delete<{ Params: { id: string; shop: string } }>('/admin/accounts/:id/shops/:shop', {
    schema: {
      summary: 'Disconnect a shop (its past payments stay readable)', tags, security,
      params: Type.Object({ id: Type.String({ description: 'account id' }), shop: Type.String({ description: 'shop host name' }) }),
      response: { '4xx': problemSchema },
    },
  }, async (request, reply) => {
    const shop = normalizeShopHost(request.params.shop)
    if (!shop || !(await disconnectShop(deps.db, request.params.id, shop))) throw notFound('connected shop')
    return reply.code(204).send()
  })
}
