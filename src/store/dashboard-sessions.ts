import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Db } from './infrastructure/database.ts'
import { hashSecret } from './ids.ts'

/** A dashboard session as its pages need it: the CSRF token its forms carry and when it ends. */
export interface DashboardSession {
  csrfToken: string
  expiresAt: Date
}

/**
 * What binds a session to the admin token that opened it: an HMAC of the token keyed with the cookie
 * value. The table holds only the cookie's SHA-256, so a reader of the table can neither sign in nor
 * test guesses of the admin token against it.
 */
const tokenBinding = (id: string, adminToken: string): Buffer => createHmac('sha256', id).update(adminToken).digest()

/**
 * Dashboard sign-in sessions, shared by every node (docs/operations.md, "Dashboard"). The cookie
 * carries 256 random bits; the table stores their SHA-256, so reading it signs nobody in.
 */
export async function createDashboardSession(
  db: Db,
  now: Date,
  ttlMs: number,
  adminToken: string,
): Promise<{ id: string; session: DashboardSession }> {
  const id = randomBytes(32).toString('base64url')
  const session = { csrfToken: randomBytes(24).toString('base64url'), expiresAt: new Date(now.getTime() + ttlMs) }
  // Expired sessions of anyone go with each sign-in: the table stays the size of the live sessions.
  await db.deleteFrom('dashboard_sessions').where('expires_at', '<=', now).execute()
  await db
    .insertInto('dashboard_sessions')
    .values({
      id_hash: hashSecret(id),
      csrf_token: session.csrfToken,
      created_at: now,
      expires_at: session.expiresAt,
      token_binding: tokenBinding(id, adminToken),
    })
    .execute()
  return { id, session }
}

/**
 * The live session of a cookie value, or undefined (unknown, signed out, expired, or opened with another
 * admin token than `adminToken`, the one configured now: a rotated token ends every earlier session).
 */
export async function findDashboardSession(db: Db, id: string, now: Date, adminToken: string): Promise<DashboardSession | undefined> {
  const row = await db
    .selectFrom('dashboard_sessions')
    .select(['csrf_token', 'expires_at', 'token_binding'])
    .where('id_hash', '=', hashSecret(id))
    .where('expires_at', '>', now)
    .executeTakeFirst()
  if (!row) return undefined
  const bound = Buffer.from(row.token_binding)
  const expected = tokenBinding(id, adminToken)
  if (bound.length !== expected.length || !timingSafeEqual(bound, expected)) return undefined
  return { csrfToken: row.csrf_token, expiresAt: row.expires_at }
}

/** Sign-out: the session is gone on every node at once. */
export async function deleteDashboardSession(db: Db, id: string): Promise<void> {
  await db.deleteFrom('dashboard_sessions').where('id_hash', '=', hashSecret(id)).execute()
}

/** "Sign out all sessions": every browser signs in again; returns how many sessions ended. */
export async function deleteAllDashboardSessions(db: Db): Promise<number> {
  const deleted = await db.deleteFrom('dashboard_sessions').executeTakeFirst()
  return Number(deleted.numDeletedRows)
}
