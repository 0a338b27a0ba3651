import type { FieldError } from '../domain/field-errors.ts'
import { normalizeShopHost, SHOP_HOST_HINT } from '../domain/shop-host.ts'
import * as shops from '../store/shops.ts'
import type { Shop } from '../store/shops.ts'
import { missingAccount, notFound, type AdminDeps, type NotFound } from './admin-deps.ts'

/** A shop to connect is a host name (docs/api.md §6), stored lower-case. */
export function readShopHost(value: unknown): { host: string } | { error: FieldError } {
  const host = normalizeShopHost(value)
  return host ? { host } : { error: { path: 'shop', message: `is required: ${SHOP_HOST_HINT}` } }
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
  const read = readShopHost(shop)
  if ('error' in read) return { kind: 'invalid', errors: [read.error] }
  const missing = await missingAccount(deps.db, accountId)
  if (missing) return missing
  const connected = await shops.connectShop(deps.db, accountId, read.host)
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
