import type { FastifyReply, FastifyRequest } from 'fastify'
import { timingSafeEqual } from 'node:crypto'
import type { Clock } from '../common/clock.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { findDashboardSession, type DashboardSession } from '../store/dashboard-sessions.ts'
import { problem } from '../http/problem.ts'

export const COOKIE = 'paywatch_dashboard'
/** A session lasts 12 hours: a working day, after which the operator signs in again. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000

declare module 'fastify' {
  interface FastifyRequest {
    dashboardSession?: DashboardSession & { id: string }
  }
}

export function cookieValue(request: FastifyRequest, name: string): string | undefined {
  for (const pair of (request.headers.cookie ?? '').split(';')) {
    const at = pair.indexOf('=')
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim()
  }
  return undefined
}

/**
 * The session cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it),
 * scoped to /dashboard, with the session's expiry, and Secure when the page was served over https.
 */
export function setSessionCookie(reply: FastifyReply, request: FastifyRequest, id: string, maxAgeMs: number): void {
  const flags = [`${COOKIE}=${id}`, 'Path=/dashboard', `Max-Age=${Math.floor(maxAgeMs / 1000)}`, 'HttpOnly', 'SameSite=Strict']
  if (servedOverHttps(request)) flags.push('Secure')
  reply.header('set-cookie', flags.join('; '))
}

/**
 * Over https, itself or behind a proxy that terminates TLS and says so (`X-Forwarded-Proto`). A client
 * claiming https over plain http only keeps its own cookie from coming back: nothing to guard against.
 */
const servedOverHttps = (request: FastifyRequest): boolean =>
  request.protocol === 'https' ||
  String(request.headers['x-forwarded-proto'] ?? '')
    .split(',')[0]
    ?.trim() === 'https'

/**
 * A browser's Origin, when sent, must name this server's host (the scheme may differ behind a proxy
 * that terminates TLS). A page of another site cannot send this server's host as its Origin.
 */
export function fromOwnOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin
  if (origin === undefined) return true
  try {
    return new URL(origin).host === request.host
  } catch {
    return false
  }
}

export function clearSessionCookie(reply: FastifyReply, request: FastifyRequest): void {
  setSessionCookie(reply, request, '', 0)
}

/** What reading a session needs: the database, the clock, and the admin token configured now. */
export interface SessionDeps {
  db: Db
  clock: Clock
  adminToken: string | null
}

/** The live session of a cookie value, when it was opened with the admin token configured now. */
export async function liveSession(deps: SessionDeps, id: string): Promise<DashboardSession | undefined> {
  if (!deps.adminToken || id.length > 100) return undefined
  return findDashboardSession(deps.db, id, deps.clock(), deps.adminToken)
}

/** Reads the request's session into `request.dashboardSession` (absent when not signed in). */
export async function loadSession(request: FastifyRequest, deps: SessionDeps): Promise<void> {
  const id = cookieValue(request, COOKIE)
  if (!id) return
  const session = await liveSession(deps, id)
  if (session) request.dashboardSession = { ...session, id }
}

/**
 * CSRF protection of every POST: the form must carry the session's token (a hidden field), and a
 * browser's Origin, when sent, must be this server. SameSite=Strict already keeps other sites'
 * requests from carrying the cookie; this holds even where that is not honoured.
 */
export function checkCsrf(request: FastifyRequest, session: DashboardSession): void {
  if (!fromOwnOrigin(request)) throw problem('CSRF_REFUSED', 'the form was sent from another origin')
  const body = request.body as Record<string, string> | undefined
  const given = Buffer.from(typeof body?.csrf === 'string' ? body.csrf : '')
  const expected = Buffer.from(session.csrfToken)
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw problem('CSRF_REFUSED', 'the form did not carry this session’s CSRF token; reload the page and try again')
  }
}
