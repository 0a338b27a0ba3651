import type { Db } from './infrastructure/database.ts'

export interface Shop {
  shop: string
  createdAt: Date
}

/** Connects a shop host name to an account; `created` is false when it was connected already. */
export async function connectShop(db: Db, accountId: string, shop: string): Promise<{ shop: Shop; created: boolean }> {
  const inserted = await db
    .insertInto('shops')
    .values({ account_id: accountId, shop })
    .onConflict((oc) => oc.columns(['account_id', 'shop']).doNothing())
    .returning(['shop', 'created_at'])
    .executeTakeFirst()
  if (inserted) return { shop: { shop: inserted.shop, createdAt: inserted.created_at }, created: true }
  const existing = await db
    .selectFrom('shops')
    .select(['shop', 'created_at'])
    .where('account_id', '=', accountId)
    .where('shop', '=', shop)
    .executeTakeFirstOrThrow()
  return { shop: { shop: existing.shop, createdAt: existing.created_at }, created: false }
}

export async function listShops(db: Db, accountId: string): Promise<Shop[]> {
  const rows = await db
    .selectFrom('shops')
    .select(['shop', 'created_at'])
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('shop')
    .execute()
  return rows.map((row) => ({ shop: row.shop, createdAt: row.created_at }))
}

export async function isShopConnected(db: Db, accountId: string, shop: string): Promise<boolean> {
  const row = await db.selectFrom('shops').select('shop').where('account_id', '=', accountId).where('shop', '=', shop).executeTakeFirst()
  return row !== undefined
}

/** Disconnects a shop; false when it was not connected. Its past payments stay readable. */
export async function disconnectShop(db: Db, accountId: string, shop: string): Promise<boolean> {
  const result = await db.deleteFrom('shops').where('account_id', '=', accountId).where('shop', '=', shop).executeTakeFirst()
  return result.numDeletedRows > 0n
}
