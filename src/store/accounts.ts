import type { Db } from './infrastructure/database.ts'
import { newId } from './ids.ts'

export interface Account {
  id: string
  name: string
  createdAt: Date
}

/** Creates an account; `id` is given only to restore a known one (`paywatch dev` across restarts). */
export async function createAccount(db: Db, name: string, id: string = newId()): Promise<Account> {
  const row = await db.insertInto('accounts').values({ id, name }).returningAll().executeTakeFirstOrThrow()
  return { id: row.id, name: row.name, createdAt: row.created_at }
}

export async function findAccount(db: Db, id: string): Promise<Account | undefined> {
  const row = await db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst()
  return row && { id: row.id, name: row.name, createdAt: row.created_at }
}

export async function listAccounts(db: Db): Promise<Account[]> {
  const rows = await db.selectFrom('accounts').selectAll().orderBy('created_at').execute()
  return rows.map((row) => ({ id: row.id, name: row.name, createdAt: row.created_at }))
}
