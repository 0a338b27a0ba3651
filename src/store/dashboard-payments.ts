import type { Tracking } from '../domain/tracking.ts'
import type { Db } from './infrastructure/database.ts'
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
 * When a filter has no index of its own beside the one walked (e.g. a chain, or an account together
 * with a status), the walk examines at most this many trackings per page; a page it leaves short
 * ends with a cursor at the last one examined, so the next page searches on from there.
 */
export const SEARCH_WINDOW = 2_000

export interface PaymentPage {
  trackings: Tracking[]
  /** Where the next (older) page starts; absent on the last page. */
  next?: { createdAt: Date; id: string }
}

/**
 * Trackings for the operator's list and search, across accounts, newest first, in bounded work at any
 * table size. One filter leads and is walked in (created_at, id) order from its index: a search (a
 * sender by `trackings_sender`, a transaction by `trackings_transaction`, a secret_id by
 * `trackings_secret_key`), else a status (`trackings_pending_created_id`, `trackings_completed_created`,
 * migration 0029), else an account (`trackings_account_created`), else none (`trackings_created`).
 * The cursor is a row comparison, an index condition, so a deep page costs what the first does.
 * The other filters are applied to at most SEARCH_WINDOW walked rows (see there).
 */
export async function searchPayments(db: Db, query: PaymentQuery): Promise<PaymentPage> {
  const search = query.search?.trim()
  const filters: [column: 'status' | 'blockchain' | 'account_id', value: string | undefined][] = [
    ['status', query.status],
    ['blockchain', query.chain],
    ['account_id', query.accountId],
  ]
  let walk = db.selectFrom('trackings')
  if (search) {
    if (ADDRESS.test(search)) walk = walk.where('sender', '=', search.toLowerCase())
    else if (HASH.test(search)) walk = walk.where('transaction', '=', search.toLowerCase())
    else walk = walk.where('secret_id', '=', search)
  } else {
    // The chain has no index of its own: it never leads.
    const lead = filters.findIndex(([column, value]) => value !== undefined && column !== 'blockchain')
    if (lead >= 0) {
      const [column, value] = filters.splice(lead, 1)[0]!
      walk = walk.where(column, '=', value!)
    }
  }
  const before = query.before
  if (before) walk = walk.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(before.createdAt, before.id)))
  const rest = filters.filter((filter): filter is [(typeof filters)[number][0], string] => filter[1] !== undefined)
  const ordered = <T extends { orderBy: (column: 'created_at' | 'id', direction: 'desc') => T }>(q: T) =>
    q.orderBy('created_at', 'desc').orderBy('id', 'desc')

  if (rest.length === 0) {
    const rows = await ordered(walk.selectAll())
      .limit(query.limit + 1)
      .execute()
    const page = rows.slice(0, query.limit).map(rowToTracking)
    const last = page.at(-1)
    return rows.length > query.limit && last ? { trackings: page, next: { createdAt: last.createdAt, id: last.id } } : { trackings: page }
  }
  // The window: the lead's next SEARCH_WINDOW rows (id, time and the filtered columns), filtered, then
  // the page's full rows by primary key.
  const window = ordered(walk.select(['id', 'created_at', 'status', 'blockchain', 'account_id'])).limit(SEARCH_WINDOW)
  let matching = db.selectFrom(window.as('w')).select(['w.id', 'w.created_at'])
  for (const [column, value] of rest) matching = matching.where(`w.${column}`, '=', value)
  const [rows, windowEnd] = await Promise.all([
    db
      .selectFrom(
        matching
          .orderBy('w.created_at', 'desc')
          .orderBy('w.id', 'desc')
          .limit(query.limit + 1)
          .as('m'),
      )
      .innerJoin('trackings as t', 't.id', 'm.id')
      .selectAll('t')
      .orderBy('t.created_at', 'desc')
      .orderBy('t.id', 'desc')
      .execute(),
    ordered(walk.select(['id', 'created_at']))
      .offset(SEARCH_WINDOW - 1)
      .limit(1)
      .executeTakeFirst(),
  ])
  const page = rows.slice(0, query.limit).map(rowToTracking)
  const last = page.at(-1)
  if (rows.length > query.limit && last) return { trackings: page, next: { createdAt: last.createdAt, id: last.id } }
  // Fewer than a page within the window: when the window was full, older ones may still match.
  return windowEnd ? { trackings: page, next: { createdAt: new Date(windowEnd.created_at), id: windowEnd.id } } : { trackings: page }
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
