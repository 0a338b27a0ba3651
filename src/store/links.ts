import type { Tracking } from '../domain/tracking.ts'
import type { Db } from './infrastructure/database.ts'
import { newId } from './ids.ts'
import { rowToTracking } from './trackings.ts'

export interface Link {
  id: string
  accountId: string
  name: string | null
  createdAt: Date
}

type LinkRow = { id: string; account_id: string; name: string | null; created_at: Date }
const toLink = (row: LinkRow): Link => ({ id: row.id, accountId: row.account_id, name: row.name, createdAt: row.created_at })

export async function createLink(db: Db, accountId: string, name: string | null): Promise<Link> {
  const row = await db
    .insertInto('links')
    .values({ id: newId(), account_id: accountId, name })
    .returning(['id', 'account_id', 'name', 'created_at'])
    .executeTakeFirstOrThrow()
  return toLink(row)
}

export async function listLinks(db: Db, accountId: string): Promise<Link[]> {
  const rows = await db
    .selectFrom('links')
    .select(['id', 'account_id', 'name', 'created_at'])
    .where('account_id', '=', accountId)
    .where('removed_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  return rows.map(toLink)
}

/** The account's link, unless it is unknown, another account's or removed. */
export async function findAccountLink(db: Db, accountId: string, linkId: string): Promise<Link | undefined> {
  const row = await db
    .selectFrom('links')
    .select(['id', 'account_id', 'name', 'created_at'])
    .where('id', '=', linkId)
    .where('account_id', '=', accountId)
    .where('removed_at', 'is', null)
    .executeTakeFirst()
  return row && toLink(row)
}

/** Removes a link (softly: its trackings keep it); false when unknown or already removed. */
export async function removeLink(db: Db, linkId: string, at: Date): Promise<boolean> {
  const row = await db
    .updateTable('links')
    .set({ removed_at: at })
    .where('id', '=', linkId)
    .where('removed_at', 'is', null)
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}

/**
 * Succeeded payments of a link confirmed strictly after `after`, oldest first. confirmed_at is unique
 * per link (see completeTracking), so paging with the last one seen never skips or repeats.
 */
export async function linkPayments(db: Db, linkId: string, after: Date | null, limit: number): Promise<Tracking[]> {
  let query = db.selectFrom('trackings').selectAll().where('link_id', '=', linkId).where('status', '=', 'success')
  if (after) query = query.where('confirmed_at', '>', after)
  const rows = await query.orderBy('confirmed_at').orderBy('id').limit(limit).execute()
  return rows.map(rowToTracking)
}
