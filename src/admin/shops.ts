import type { FieldError } from '../domain/field-errors.ts'
import { readFields, type FieldTable, type ParseResult } from '../domain/request-fields.ts'
import { normalizeShopHost, SHOP_HOST_HINT } from '../domain/shop-host.ts'
import * as shops from '../store/shops.ts'
import type { Shop } from '../store/shops.ts'
import { missingAccount, notFound, type AdminDeps, type NotFound } from './admin-deps.ts'

/**
 * The POST /admin/accounts/{id}/shops body: what readShopRequest reads and the OpenAPI schema documents
 * (src/domain/request-fields.ts says why one table drives both). A shop is a host name (docs/api.md §6).
 */
export const shopRequestFields = {
  shop: { kind: 'shop-host', required: true, problem: `is required: ${SHOP_HOST_HINT}` },
} as const satisfies FieldTable

/** Reads a shop to connect (the CLI passes `{ shop }` of its argument to the same reader). */
export function readShopRequest(body: Record<string, unknown>): ParseResult<{ shop: string }> {
  return readFields(body, shopRequestFields, (read) => ({ shop: read.shopHost('shop') ?? '' }))
}

/**
 * Connects a shop host name to the account (docs/api.md §6): the host is read first, then the
 * account must exist. `created` is false when it was connected already.
 */
export async function connectShop(
  deps: AdminDeps,
  accountId: string,
  shop: unknown,
): Promise<{ kind: 'connected'; shop: Shop; created: boolean } | { kind: 'invalid'; errors: FieldError[] } | NotFound<'account'>> {
  const read = readShopRequest({ shop })
  if (!read.ok) return { kind: 'invalid', errors: read.errors }
  const missing = await missingAccount(deps.db, accountId)
  if (missing) return missing
  const connected = await shops.connectShop(deps.db, accountId, read.value.shop)
  return { kind: 'connected', shop: connected.shop, created: connected.created }
}

export async function listShops(deps: AdminDeps, accountId: string): Promise<{ kind: 'listed'; shops: Shop[] } | NotFound<'account'>> {
  const missing = await missingAccount(deps.db, accountId)
  if (missing) return missing
  return { kind: 'listed', shops: await shops.listShops(deps.db, accountId) }
}

/** Disconnects a shop (its past payments stay readable); one that is not a host name was never connected. */
export async function disconnectShop(
  deps: AdminDeps,
  accountId: string,
  shop: string,
): Promise<{ kind: 'disconnected'; shop: string } | NotFound<'connected shop'>> {
  const host = normalizeShopHost(shop)
  if (!host || !(await shops.disconnectShop(deps.db, accountId, host))) return notFound('connected shop')
  return { kind: 'disconnected', shop: host }
}
