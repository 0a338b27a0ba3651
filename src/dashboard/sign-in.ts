import { timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { HttpProblem } from '../http/problem.ts'
import { createDashboardSession, deleteDashboardSession } from '../store/dashboard-sessions.ts'
import type { DashboardDeps } from './deps.ts'
import { html } from './html.ts'
import { notice, page, sendPage } from './layout.ts'
import {
  clearSessionCookie,
  COOKIE,
  cookieValue,
  SESSION_TTL_MS,
  setSessionCookie,
  checkCsrf,
  loadSession,
  fromOwnOrigin,
} from './session.ts'

function signInPage(message?: string): string {
  return page(
    { title: 'Sign in' },
    html`${notice(message, 'error')}
      <form method="post" action="/dashboard/sign-in" class="card narrow">
        <label for="token">Admin token</label>
        <input id="token" name="token" type="password" autocomplete="current-password" required autofocus />
        <p class="hint">The value of <code>PAYWATCH_ADMIN_TOKEN</code> on this service.</p>
        <button type="submit">Sign in</button>
      </form>`,
  )
}

/**
 * Sign-in with the admin token and sign-out. A wrong token is answered 401 with a plain message and
 * counted per address with the API's failed authentications: past the limit the address waits.
 */
export async function signInRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const expected = Buffer.from(deps.adminToken ?? '')

  app.get('/dashboard/sign-in', async (request, reply) => {
    await loadSession(request, deps.db, deps.clock)
    if (request.dashboardSession) return reply.redirect('/dashboard', 303)
    return sendPage(reply, signInPage())
  })
  app.get('/dashboard/', async (_request, reply) => reply.redirect('/dashboard', 301))

  app.post('/dashboard/sign-in', async (request: FastifyRequest, reply: FastifyReply) => {
    if (!fromOwnOrigin(request)) {
      return sendPage(reply, signInPage('This form was sent from another site.'), 403)
    }
    try {
      await deps.authThrottle.checkAddress(request.ip)
    } catch (error) {
      if (!(error instanceof HttpProblem)) throw error
      reply.headers(error.headers)
      return sendPage(reply, signInPage(`Too many wrong tokens from your address. ${error.detail}.`), 429)
    }
    const body = request.body as Record<string, unknown> | undefined
    const given = Buffer.from(typeof body?.token === 'string' ? body.token : '')
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      await deps.authThrottle.failedAddress(request.ip)
      return sendPage(reply, signInPage('That is not the admin token. Check PAYWATCH_ADMIN_TOKEN and try again.'), 401)
    }
    const created = await createDashboardSession(deps.db, deps.clock(), SESSION_TTL_MS)
    setSessionCookie(reply, request, created.id, SESSION_TTL_MS)
    return reply.redirect('/dashboard', 303)
  })

  app.post('/dashboard/sign-out', async (request, reply) => {
    await loadSession(request, deps.db, deps.clock)
    const session = request.dashboardSession
    if (session) {
      checkCsrf(request, session)
      await deleteDashboardSession(deps.db, session.id)
    } else {
      const id = cookieValue(request, COOKIE)
      if (id) await deleteDashboardSession(deps.db, id)
    }
    clearSessionCookie(reply, request)
    return reply.redirect('/dashboard/sign-in', 303)
  })
}
