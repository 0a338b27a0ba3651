import type { Tracking } from '../domain/tracking.ts'
import type { Db } from './infrastructure/database.ts'
import { rowToTracking } from './trackings.ts'

/** The account's succeeded tracking with this Shopify payment id (pending, failed and unknown alike: undefined). */
export async function findSucceededShopifyPayment(db: Db, accountId: string, shopifyPaymentId: string): Promise<Tracking | undefined> {
  const row = await db
    .selectFrom('trackings')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('shopify_payment_id', '=', shopifyPaymentId)
    .where('status', '=', 'success')
    .executeTakeFirst()
  return row && rowToTracking(row)
}

/** Whether the account already tracks a payment with this Shopify payment id (any status). */
export async function isShopifyPaymentTracked(db: Db, accountId: string, shopifyPaymentId: string): Promise<boolean> {
  const row = await db
    .selectFrom('trackings')
    .select('id')
    .where('account_id', '=', accountId)
    .where('shopify_payment_id', '=', shopifyPaymentId)
    .executeTakeFirst()
  return row !== undefined
}
