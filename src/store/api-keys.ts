import { timingSafeEqual } from 'node:crypto'
import type { Db } from './infrastructure/database.ts'
import { hashSecret, newId, newSecret } from './ids.ts'

export interface ApiKeyInfo {
  id: string
  accountId: string
  prefix: string
  createdAt: Date
  revokedAt: Date | null
}

/**
 * Creates a key; the clear key is returned here once and never stored. `known` restores a key its owner
 * kept (`paywatch dev` keeps its key in its own data folder across restarts).
 */
export async function createApiKey(db: Db, accountId: string, known?: { id: string; key: string }): Promise<{ id: string; key: string }> {
  const key = known?.key ?? newSecret('pw')
  const id = known?.id ?? newId()
  await db
    .insertInto('api_keys')
    .values({ id, account_id: accountId, key_hash: hashSecret(key), prefix: key.slice(0, 7) })
    .execute()
  return { id, key }
}

/** The account of an active key, or undefined; the stored hash is compared in constant time. */
export async function authenticateApiKey(db: Db, key: string): Promise<{ keyId: string; accountId: string } | undefined> {
  const hash = hashSecret(key)
  const row = await db
    .selectFrom('api_keys')
    .select(['id', 'account_id', 'key_hash'])
    .where('key_hash', '=', hash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  if (!row || !timingSafeEqual(Buffer.from(row.key_hash), hash)) return undefined
  return { keyId: row.id, accountId: row.account_id }
}

/** Revokes a key; false when it does not exist. Revoking twice keeps the first time. */
export async function revokeApiKey(db: Db, id: string, at: Date): Promise<boolean> {
  const found = await db.selectFrom('api_keys').select('id').where('id', '=', id).executeTakeFirst()
  if (!found) return false
  await db.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).execute()
  return true
}

export async function listApiKeys(db: Db, accountId: string): Promise<ApiKeyInfo[]> {
  const rows = await db.selectFrom('api_keys').selectAll().where('account_id', '=', accountId).orderBy('created_at').execute()
  return rows.map((r) => ({ id: r.id, accountId: r.account_id, prefix: r.prefix, createdAt: r.created_at, revokedAt: r.revoked_at }))
}
