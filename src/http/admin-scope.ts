import { timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify'
import { noAdminApi, problem } from './problem.ts'
import { ADMIN_PROBLEMS, documentProblems } from './problem-schemas.ts'
import { readByHand } from './request-schemas.ts'

/** Checks `Authorization: Bearer $PAYWATCH_ADMIN_TOKEN`; without a configured token the admin API does not exist. */
export function adminGuard(adminToken: string | null) {
  const expected = adminToken ? Buffer.from(adminToken) : null
  return async (request: FastifyRequest): Promise<void> => {
    if (!expected) throw noAdminApi(request.method, request.url)
    const header = request.headers.authorization ?? ''
    const given = Buffer.from(header.startsWith('Bearer ') ? header.slice(7) : '')
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw problem('UNAUTHORIZED', 'send the admin token as Authorization: Bearer <PAYWATCH_ADMIN_TOKEN>')
    }
  }
}

/**
 * The admin API (docs/api.md §6) as one Fastify scope: every admin route, whichever subsystem adds it, is
 * registered inside it, so the guard, the hand-reading of bodies (the admin use cases parse their own
 * input, src/http/request-schemas.ts) and what the document says of every admin route (tag, security,
 * the guard's problems) are stated once here, and a route cannot be added to the admin API without them.
 */
export function adminScope(adminToken: string | null, plugins: readonly FastifyPluginAsync[]): FastifyPluginAsync {
  return async (admin: FastifyInstance) => {
    admin.addHook('onRequest', adminGuard(adminToken))
    admin.setValidatorCompiler(readByHand)
    admin.addHook('onRoute', (route) => {
      if (!route.url.startsWith('/admin/')) throw new Error(`${route.url}: the admin scope holds /admin/ routes only`)
      route.schema = { tags: ['admin'], security: [{ adminToken: [] }], ...route.schema }
      documentProblems(route, ADMIN_PROBLEMS)
    })
    for (const plugin of plugins) await admin.register(plugin)
  }
}
