import { sql } from 'kysely'
import type { Db } from './infrastructure/database.ts'

/** One endpoint (account, scheme://host[:port]) as operators and integrators see it. */
export interface EndpointRow {
  accountId: string
  url: string
  state: 'active' | 'disabled'
  disabledReason: string | null
  failingSince: Date | null
  lastSuccessAt: Date | null
  pendingDeliveries: number
}

const date = (value: Date | string | null): Date | null => (value === null ? null : new Date(value))

/**
 * Endpoints with their due deliveries (waiting, paused or in hand), of one account or of all. An endpoint
 * appears with the first attempt made to it.
 */
export async function listEndpoints(db: Db, accountId: string | null): Promise<EndpointRow[]> {
  const rows = await sql<{
    account_id: string
    url: string
    state: 'active' | 'disabled'
    disabled_reason: string | null
    failing_since: Date | null
    last_success_at: Date | null
    pending: string
  }>`
    SELECT e.account_id, e.url, e.state, e.disabled_reason, e.failing_since, e.last_success_at,
      (SELECT count(*) FROM deliveries d JOIN trackings t ON t.id = d.tracking_id
        WHERE d.state = 'due' AND t.account_id = e.account_id AND t.callback_origin = e.url) AS pending
    FROM webhook_endpoints e
    WHERE ${accountId === null ? sql`TRUE` : sql`e.account_id = ${accountId}`}
    ORDER BY e.account_id, e.url`.execute(db)
  return rows.rows.map((row) => ({
    accountId: row.account_id,
    url: row.url,
    state: row.state,
    disabledReason: row.disabled_reason,
    failingSince: date(row.failing_since),
    lastSuccessAt: date(row.last_success_at),
    pendingDeliveries: Number(row.pending),
  }))
}

/** True when `url` is an endpoint of the account: attempted already, or the origin of one of its trackings' callbacks. */
export async function isAccountEndpoint(db: Db, accountId: string, url: string): Promise<boolean> {
  const row = await sql<{ one: number }>`
    SELECT 1 AS one FROM webhook_endpoints WHERE account_id = ${accountId} AND url = ${url}
    UNION ALL
    (SELECT 1 FROM trackings WHERE account_id = ${accountId} AND callback_origin = ${url} LIMIT 1)
    LIMIT 1`.execute(db)
  return row.rows.length > 0
}

/** The disabled endpoints of every account, as `accountId url` keys: the worker pauses what it claims for them. */
export async function disabledEndpointKeys(db: Db): Promise<Set<string>> {
  const rows = await db.selectFrom('webhook_endpoints').select(['account_id', 'url']).where('state', '=', 'disabled').execute()
  return new Set(rows.map((row) => endpointKey(row.account_id, row.url)))
}

export const endpointKey = (accountId: string, url: string): string => `${accountId} ${url}`

/**
 * Enables an endpoint (its failure streak starts over) and releases its paused deliveries, due now.
 * Answers how many were released.
 */
export async function enableEndpoint(db: Db, accountId: string, url: string, now: Date): Promise<number> {
  return db.transaction().execute(async (trx) => {
    await trx
      .insertInto('webhook_endpoints')
      .values({ account_id: accountId, url, updated_at: now })
      .onConflict((oc) =>
        oc.columns(['account_id', 'url']).doUpdateSet({
          state: 'active',
          disabled_reason: null,
          disabled_at: null,
          failing_since: null,
          updated_at: now,
        }),
      )
      .execute()
    const resumed = await sql`
      UPDATE deliveries AS d SET paused_at = NULL, next_attempt_at = ${now}, due_at = ${now}, updated_at = ${now}
      FROM trackings t
      WHERE t.id = d.tracking_id AND d.paused_at IS NOT NULL AND d.state = 'due'
        AND t.account_id = ${accountId} AND t.callback_origin = ${url}`.execute(trx)
    return Number(resumed.numAffectedRows ?? 0n)
  })
}

/** How many endpoints are in each state (for the metrics). */
export async function endpointCountsByState(db: Db): Promise<Partial<Record<'active' | 'disabled', number>>> {
  const rows = await db
    .selectFrom('webhook_endpoints')
    .select(['state', sql<string>`count(*)`.as('n')])
    .groupBy('state')
    .execute()
  return Object.fromEntries(rows.map((row) => [row.state, Number(row.n)]))
}
