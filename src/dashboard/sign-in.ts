import { timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { HttpProblem } from '../http/problem.ts'
import { signOutAllDashboardSessions } from '../admin/dashboard-sessions.ts'
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
import type { SessionStreams } from './session-streams.ts'

function signInPage(message?: string, kind: 'ok' | 'error' = 'error'): string {
  return page(
    { title: 'Sign in' },
    html`${notice(message, kind)}
      <form method="post" action="/dashboard/sign-in" class="card narrow">
        <label for="token">Admin token</label>
        <input id="token" name="token" type="password" autocomplete="current-password" required autofocus />
        <p class="hint">The value of <code>PAYWATCH_ADMIN_TOKEN</code> on this service.</p>
        <button type="submit">Sign in</button>
      </form>`,
  )
}

/**
 * Sign-in with the admin token, sign-out, and sign-out of every session. A wrong token is answered 401
 * with a plain message and counted per address with the API's failed authentications: past the limit
 * the address waits. A session is bound to the admin token it was opened with (a rotated token ends it);
 * signing out ends the session's live streams on this node at once.
 */
export async function signInRoutes(app: FastifyInstance, deps: DashboardDeps & { streams: SessionStreams }): Promise<void> {
  const expected = Buffer.from(deps.adminToken ?? '')

  app.get<{ Querystring: { notice?: unknown } }>('/dashboard/sign-in', async (request, reply) => {
    await loadSession(request, deps)
    if (request.dashboardSession) return reply.redirect('/dashboard', 303)
    const signedOutAll = request.query.notice === 'signed-out-all'
    return sendPage(reply, signedOutAll ? signInPage('Every dashboard session is signed out.', 'ok') : signInPage())
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
    const created = await createDashboardSession(deps.db, deps.clock(), SESSION_TTL_MS, deps.adminToken!)
    setSessionCookie(reply, request, created.id, SESSION_TTL_MS)
    return reply.redirect('/dashboard', 303)
  })

  app.post('/dashboard/sign-out', async (request, reply) => {
    await loadSession(request, deps)
    const session = request.dashboardSession
    if (session) checkCsrf(request, session)
    const id = session?.id ?? cookieValue(request, COOKIE)
    if (id) {
      await deleteDashboardSession(deps.db, id)
      deps.streams.endSession(id)
    }
    clearSessionCookie(reply, request)
    return reply.redirect('/dashboard/sign-in', 303)
  })

  // Every session, of every browser, on every node (also from the admin API: DELETE /admin/dashboard-sessions).
  app.post('/dashboard/sign-out-all', async (request, reply) => {
    await loadSession(request, deps)
    const session = request.dashboardSession
    if (!session) return reply.code(401).type('text/plain').send('sign in first')
    checkCsrf(request, session)
    await signOutAllDashboardSessions(deps)
    deps.streams.endAll()
    clearSessionCookie(reply, request)
    return reply.redirect('/dashboard/sign-in?notice=signed-out-all', 303)
  })
}
