import { sql } from 'kysely'
import type { WritePart } from './completion-writes.ts'
import type { Db } from './infrastructure/database.ts'

/** What one attempt said about its endpoint. */
export interface EndpointAttempt {
  accountId: string
  url: string
  /** 2xx answered (200 or 202). */
  succeeded: boolean
  /** 410 Gone: disabled at once. */
  gone: boolean
}

export interface DisabledEndpoint {
  accountId: string
  url: string
  reason: string
  /** Disabled by a 410 answer (else by its failure streak). */
  gone: boolean
}

/**
 * Records a batch of attempts in the endpoints' health, in one transaction: a success clears the
 * failure streak and sets `last_success_at`; a failure starts the streak unless one runs. An active
 * endpoint is disabled when it answered 410, or when its streak is `disableAfterMs` old; its due
 * deliveries not in a worker's hand are paused. Answers the endpoints disabled here.
 */
export async function recordEndpointHealth(
  db: Db,
  attempts: EndpointAttempt[],
  now: Date,
  disableAfterMs: number,
): Promise<DisabledEndpoint[]> {
  if (attempts.length === 0) return []
  const endpoints = endpointsOf(attempts)
  const failing = endpoints.filter((e) => !e.succeeded || e.gone)
  // Nothing failed (the usual batch): one statement, no transaction around it (on the embedded
  // database each statement is a turn of the main thread).
  if (failing.length === 0) {
    await streaksUpsert(db, endpoints, now).execute()
    return []
  }
  return db.transaction().execute(async (trx) => {
    await streaksUpsert(trx, endpoints, now).execute()
    const limit = new Date(now.getTime() - disableAfterMs)
    const candidates = failing.map((e) => sql`(${e.accountId}::text, ${e.url}::text, ${e.gone}::boolean)`)
    const disabled = await sql<{ account_id: string; url: string; disabled_reason: string; gone: boolean }>`
      UPDATE webhook_endpoints AS e SET state = 'disabled', disabled_at = ${now}, updated_at = ${now},
        disabled_reason = CASE WHEN c.gone THEN 'the endpoint answered 410 Gone'
          ELSE 'nothing but failures since ' || to_char(e.failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') END
      FROM (VALUES ${sql.join(candidates)}) AS c(account_id, url, gone)
      WHERE e.account_id = c.account_id AND e.url = c.url AND e.state = 'active'
        AND (c.gone OR (e.failing_since IS NOT NULL AND e.failing_since <= ${limit}))
      RETURNING e.account_id, e.url, e.disabled_reason, c.gone`.execute(trx)

    for (const row of disabled.rows) {
      await sql`
        UPDATE deliveries AS d SET paused_at = ${now}, updated_at = ${now}
        FROM trackings t
        WHERE t.id = d.tracking_id AND d.state = 'due' AND d.paused_at IS NULL AND d.claimed_by IS NULL
          AND t.account_id = ${row.account_id} AND t.callback_origin = ${row.url}`.execute(trx)
    }
    return disabled.rows.map((row) => ({ accountId: row.account_id, url: row.url, reason: row.disabled_reason, gone: row.gone }))
  })
}

/**
 * Gives claimed deliveries back without an attempt, paused (no retry spent), when their endpoint is
 * disabled in the database now (a node's list of disabled endpoints may be a second old). Answers the
 * ids paused; the others are still the caller's to attempt.
 */
export async function pauseClaimedDeliveries(
  db: Db,
  claim: string,
  items: { id: string; accountId: string; url: string }[],
  now: Date,
): Promise<Set<string>> {
  if (items.length === 0) return new Set()
  const values = items.map((item) => sql`(${item.id}::text, ${item.accountId}::text, ${item.url}::text)`)
  const paused = await sql<{ id: string }>`
    UPDATE deliveries AS d SET paused_at = ${now}, locked_until = NULL, claimed_by = NULL, sending_at = NULL, next_attempt_at = ${now}, updated_at = ${now}
    FROM (VALUES ${sql.join(values)}) AS v(id, account_id, url)
    JOIN webhook_endpoints e ON e.account_id = v.account_id AND e.url = v.url AND e.state = 'disabled'
    WHERE d.id = v.id AND d.claimed_by = ${claim} AND d.state = 'due'
    RETURNING d.id`.execute(db)
  return new Set(paused.rows.map((row) => row.id))
}

/** The last attempt of an endpoint in the batch decides its streak; a 410 anywhere in it disables. In key order (see `streaksUpsert`). */
function endpointsOf(attempts: EndpointAttempt[]): EndpointAttempt[] {
  const byEndpoint = new Map<string, EndpointAttempt>()
  for (const attempt of attempts) {
    const key = `${attempt.accountId} ${attempt.url}`
    const seen = byEndpoint.get(key)
    byEndpoint.set(key, { ...attempt, gone: attempt.gone || (seen?.gone ?? false) })
  }
  return [...byEndpoint.keys()].sort().map((key) => byEndpoint.get(key)!)
}

/**
 * The streaks' upsert, unexecuted. Rows in key order: two nodes' batches lock shared endpoints in the
 * same order and never wait on each other in a circle (the attempts' statement carries it, see below).
 */
function streaksUpsert(db: Db, endpoints: EndpointAttempt[], now: Date): WritePart {
  const values = endpoints.map(
    (e) =>
      sql`(${e.accountId}::text, ${e.url}::text, ${e.succeeded ? null : now}::timestamptz, ${e.succeeded ? now : null}::timestamptz, ${now}::timestamptz)`,
  )
  const upsert = sql`
    INSERT INTO webhook_endpoints AS e (account_id, url, failing_since, last_success_at, updated_at)
    VALUES ${sql.join(values)}
    ON CONFLICT (account_id, url) DO UPDATE SET
      failing_since = CASE WHEN excluded.last_success_at IS NOT NULL THEN NULL ELSE COALESCE(e.failing_since, excluded.failing_since) END,
      last_success_at = COALESCE(excluded.last_success_at, e.last_success_at),
      updated_at = excluded.updated_at`
  return { toOperationNode: () => upsert.toOperationNode(), execute: () => upsert.execute(db) }
}

/**
 * A batch in which every attempt succeeded, as a part of the attempts' own statement (attempt-records.ts,
 * `alsoWrite`): its endpoints' streaks end and `last_success_at` moves, and nothing can be disabled.
 * Undefined when an attempt failed: `recordEndpointHealth` records that batch.
 */
export function successfulEndpointsUpsert(attempts: EndpointAttempt[], now: Date): ((db: Db) => WritePart) | undefined {
  if (attempts.length === 0 || attempts.some((a) => !a.succeeded || a.gone)) return undefined
  const endpoints = endpointsOf(attempts)
  return (db) => streaksUpsert(db, endpoints, now)
}
