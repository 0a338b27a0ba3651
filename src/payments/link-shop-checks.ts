import { normalizeShopHost } from '../domain/shop-host.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { findAccountLink } from '../store/links.ts'
import { isShopConnected } from '../store/shops.ts'
import { isShopifyPaymentTracked } from '../store/shopify-payments.ts'
import type { ReferenceCheck } from '../domain/reference-check.ts'

/**
 * Create-time checks of `link_id`, `shop` and `shopify_payment_id` (docs/api.md §5): the link
 * and the shop must be the key's account's (another account's answers 404 like an unknown one, so ids
 * do not leak), and a Shopify payment id is tracked once per account (409). The unique index on
 * (account_id, shopify_payment_id) settles races between two creates.
 */
export function linkAndShopChecks(db: Db): ReferenceCheck {
  return async (accountId, request) => {
    if (request.linkId !== null && !(await findAccountLink(db, accountId, request.linkId))) {
      return { kind: 'not-found', detail: `link ${JSON.stringify(request.linkId)} not found` }
    }
    if (request.shop !== null) {
      const host = normalizeShopHost(request.shop)
      if (!host || !(await isShopConnected(db, accountId, host))) {
        return { kind: 'not-found', detail: `shop ${JSON.stringify(request.shop)} is not connected to this account` }
      }
    }
    if (request.shopifyPaymentId !== null && (await isShopifyPaymentTracked(db, accountId, request.shopifyPaymentId))) {
      return { kind: 'conflict', detail: `Shopify payment ${JSON.stringify(request.shopifyPaymentId)} is already tracked` }
    }
    return undefined
  }
}
