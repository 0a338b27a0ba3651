import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ASSETS } from './assets.ts'
import type { DashboardDeps } from './deps.ts'
import { checkDashboardInput } from './input-guard.ts'
import { checkCsrf, loadSession } from './session.ts'
import { signInRoutes } from './sign-in.ts'
import { overviewRoutes } from './overview.ts'
import { paymentListRoutes } from './payment-list.ts'
import { paymentPageRoutes } from './payment-page.ts'
import { accountRoutes } from './accounts.ts'
import { appRoutes } from './apps.ts'
import { endpointRoutes } from './endpoints.ts'
import { liveRoutes } from './live.ts'
import { rememberProgress } from './progress-memory.ts'
import { createSessionStreams } from './session-streams.ts'

const FORM_LIMIT = 16 * 1024

/**
 * The operator dashboard under /dashboard (docs/operations.md, "Dashboard"): server-rendered pages,
 * signed in with the admin token. Without `PAYWATCH_ADMIN_TOKEN` no route exists (404, like the
 * admin API). Pages are not part of the API: they are left out of the OpenAPI document.
 */
export async function dashboardRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  if (!deps.adminToken) return
  app.decorateRequest('dashboardSession', undefined)
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true }
  })
  // Forms post URL-encoded fields; the rest of the service takes JSON only.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_request, body, done) => {
    // A repeated field (checkboxes) becomes a list; one field stays a string. Collected in a Map and
    // handed on as an object without a prototype: a field named `__proto__` is just a field.
    const fields = new Map<string, string | string[]>()
    for (const [name, value] of new URLSearchParams(body as string)) {
      const before = fields.get(name)
      fields.set(name, before === undefined ? value : [before, value].flat())
    }
    done(null, Object.assign(Object.create(null), Object.fromEntries(fields)))
  })
  // Every input, before any session or database work: one value each, storable text, bounded length.
  app.addHook('preValidation', checkDashboardInput)
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', reply.getHeader('cache-control') ?? 'no-store')
    reply.header('x-content-type-options', 'nosniff')
    reply.header('x-frame-options', 'DENY')
    reply.header('referrer-policy', 'same-origin')
    reply.header(
      'content-security-policy',
      "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    )
  })

  app.get<{ Params: { name: string } }>('/dashboard/assets/:name', async (request, reply) => {
    const asset = ASSETS.get(request.params.name)
    if (!asset) return reply.code(404).type('text/plain').send('not found')
    return reply.header('cache-control', 'public, max-age=86400, immutable').type(asset.type).send(asset.body)
  })
  const streams = createSessionStreams()
  await app.register(async (open) => signInRoutes(open, { ...deps, streams }))

  // Everything else needs a session; every POST its CSRF token.
  await app.register(async (signedIn) => {
    signedIn.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
      await loadSession(request, deps)
      const session = request.dashboardSession
      if (!session) {
        if (request.method === 'GET') return reply.redirect('/dashboard/sign-in', 303)
        return reply.code(401).type('text/plain').send('sign in first')
      }
      if (request.method === 'POST') checkCsrf(request, session)
    })
    const progress = rememberProgress(deps.events)
    signedIn.addHook('onClose', async () => progress.close())
    const pages = { ...deps, progress, streams }
    for (const routes of [overviewRoutes, paymentListRoutes, paymentPageRoutes, accountRoutes, appRoutes, endpointRoutes, liveRoutes]) {
      await signedIn.register(async (scope) => routes(scope, pages))
    }
  })
}
