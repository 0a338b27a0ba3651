import type { Tracking } from '../domain/tracking.ts'
import type { Db } from './database.ts'
import { rowToTracking } from './trackings.ts'

/** The dashboard's payment list: one page of it, newest first. */
export interface PaymentQuery {
  /** A secret_id, a sender address or a transaction hash (told apart by their form). */
  search?: string
  status?: 'pending' | 'success' | 'failed'
  chain?: string
  accountId?: string
  /** Keyset cursor: the page starts after this (created_at, id). */
  before?: { createdAt: Date; id: string }
  limit: number
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const HASH = /^0x[0-9a-fA-F]{64}$/

/**
 * Trackings for the operator's list and search, across accounts. Each form is one index probe or an
 * index walk in (created_at, id) order (migration 0022): a sender by `trackings_sender`, a
 * transaction by `trackings_transaction`, a secret_id by `trackings_secret`; the filters narrow the
 * walk. Asks one row more than `limit` to know whether there is a next page.
 */
export async function searchPayments(db: Db, query: PaymentQuery): Promise<{ trackings: Tracking[]; more: boolean }> {
  let select = db.selectFrom('trackings').selectAll()
  const search = query.search?.trim()
  if (search) {
    if (ADDRESS.test(search)) select = select.where('sender', '=', search.toLowerCase())
    else if (HASH.test(search)) select = select.where('transaction', '=', search.toLowerCase())
    else select = select.where('secret_id', '=', search)
  }
  if (query.status) select = select.where('status', '=', query.status)
  if (query.chain) select = select.where('blockchain', '=', query.chain)
  if (query.accountId) select = select.where('account_id', '=', query.accountId)
  const before = query.before
  if (before) {
    select = select.where((eb) =>
      eb.or([eb('created_at', '<', before.createdAt), eb.and([eb('created_at', '=', before.createdAt), eb('id', '<', before.id)])]),
    )
  }
  const rows = await select
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(query.limit + 1)
    .execute()
  return { trackings: rows.slice(0, query.limit).map(rowToTracking), more: rows.length > query.limit }
}

/** The trackings of a secret_id in any account (secret ids are unique per account only): at most a few. */
export async function findTrackingsBySecretAnyAccount(db: Db, secretId: string): Promise<Tracking[]> {
  const rows = await db
    .selectFrom('trackings')
    .selectAll()
    .where('secret_id', '=', secretId)
    .orderBy('created_at', 'desc')
    .limit(10)
    .execute()
  return rows.map(rowToTracking)
}
