import { randomBytes } from 'node:crypto'
import type { Db } from './database.ts'
import { hashSecret } from './ids.ts'

/** A dashboard session as its pages need it: the CSRF token its forms carry and when it ends. */
export interface DashboardSession {
  csrfToken: string
  expiresAt: Date
}

/**
 * Dashboard sign-in sessions, shared by every node (docs/operations.md, "Dashboard"). The cookie
 * carries 256 random bits; the table stores their SHA-256, so reading it signs nobody in.
 */
export async function createDashboardSession(db: Db, now: Date, ttlMs: number): Promise<{ id: string; session: DashboardSession }> {
  const id = randomBytes(32).toString('base64url')
  const session = { csrfToken: randomBytes(24).toString('base64url'), expiresAt: new Date(now.getTime() + ttlMs) }
  // Expired sessions of anyone go with each sign-in: the table stays the size of the live sessions.
  await db.deleteFrom('dashboard_sessions').where('expires_at', '<=', now).execute()
  await db
    .insertInto('dashboard_sessions')
    .values({ id_hash: hashSecret(id), csrf_token: session.csrfToken, created_at: now, expires_at: session.expiresAt })
    .execute()
  return { id, session }
}

/** The live session of a cookie value, or undefined (unknown, signed out or expired). */
export async function findDashboardSession(db: Db, id: string, now: Date): Promise<DashboardSession | undefined> {
  const row = await db
    .selectFrom('dashboard_sessions')
    .select(['csrf_token', 'expires_at'])
    .where('id_hash', '=', hashSecret(id))
    .where('expires_at', '>', now)
    .executeTakeFirst()
  return row && { csrfToken: row.csrf_token, expiresAt: row.expires_at }
}

/** Sign-out: the session is gone on every node at once. */
export async function deleteDashboardSession(db: Db, id: string): Promise<void> {
  await db.deleteFrom('dashboard_sessions').where('id_hash', '=', hashSecret(id)).execute()
}
