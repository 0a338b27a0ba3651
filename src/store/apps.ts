import type { Db } from './infrastructure/database.ts'
import { newId } from './ids.ts'

export interface App {
  id: string
  accountId: string
  name: string
  createdAt: Date
}

type AppRow = { id: string; account_id: string; name: string; created_at: Date }
const toApp = (row: AppRow): App => ({ id: row.id, accountId: row.account_id, name: row.name, createdAt: row.created_at })

/** An app owned by a (developer) account; other accounts grant it scopes. */
export async function createApp(db: Db, accountId: string, name: string): Promise<App> {
  return toApp(await db.insertInto('apps').values({ id: newId(), account_id: accountId, name }).returningAll().executeTakeFirstOrThrow())
}

export async function findApp(db: Db, id: string): Promise<App | undefined> {
  const row = await db.selectFrom('apps').selectAll().where('id', '=', id).executeTakeFirst()
  return row && toApp(row)
}

export async function listApps(db: Db, accountId: string): Promise<App[]> {
  const rows = await db.selectFrom('apps').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('id').execute()
  return rows.map(toApp)
}

/** Deletes an app and, with it, every grant and access token of it; false when unknown. */
export async function deleteApp(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('apps').where('id', '=', id).executeTakeFirst()
  return result.numDeletedRows > 0n
}
