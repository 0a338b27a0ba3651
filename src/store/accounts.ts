import type { Db } from './database.ts'
import { newId } from './ids.ts'

export interface Account {
  id: string
  name: string
  createdAt: Date
}

export async function createAccount(db: Db, name: string): Promise<Account> {
  const row = await db.insertInto('accounts').values({ id: newId(), name }).returningAll().executeTakeFirstOrThrow()
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
