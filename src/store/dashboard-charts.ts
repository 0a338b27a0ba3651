import { sql } from 'kysely'
import type { Db } from './infrastructure/database.ts'

/**
 * Buckets start at multiples of their width since the Unix epoch (date_bin: five times cheaper per row
 * than arithmetic on the epoch seconds).
 */
const EPOCH = '1970-01-01T00:00:00Z'

/** One bucket of a chart: its start and value(s). */
export interface CountBucket {
  at: Date
  count: number
}

export interface LatencyBucket {
  at: Date
  /** Median and slowest attempt of the bucket, in milliseconds. */
  p50: number
  max: number
  attempts: number
}

/**
 * Successful payments per bucket since `since` (by `confirmed_at`, index `trackings_confirmed`): the
 * overview's "payments completed" chart. Empty buckets are absent; the chart fills them.
 */
export async function completedPerBucket(db: Db, since: Date, bucketSeconds: number): Promise<CountBucket[]> {
  const bucket = sql<Date>`date_bin(${`${bucketSeconds} seconds`}::interval, confirmed_at, ${EPOCH}::timestamptz)`
  const rows = await db
    .selectFrom('trackings')
    .select([bucket.as('at'), db.fn.countAll<string>().as('count')])
    .where('confirmed_at', 'is not', null)
    .where('confirmed_at', '>=', since)
    .groupBy(sql`1`)
    .orderBy(sql`1`)
    .execute()
  return rows.map((row) => ({ at: new Date(row.at), count: Number(row.count) }))
}

/** Callback attempt durations per bucket since `since` (index `delivery_attempts_started`). */
export async function callbackLatencyPerBucket(db: Db, since: Date, bucketSeconds: number): Promise<LatencyBucket[]> {
  const bucket = sql<Date>`date_bin(${`${bucketSeconds} seconds`}::interval, started_at, ${EPOCH}::timestamptz)`
  const rows = await db
    .selectFrom('delivery_attempts')
    .select([
      bucket.as('at'),
      sql<number>`percentile_cont(0.5) within group (order by duration_ms)`.as('p50'),
      sql<number>`max(duration_ms)`.as('max'),
      db.fn.countAll<string>().as('attempts'),
    ])
    .where('started_at', '>=', since)
    .groupBy(sql`1`)
    .orderBy(sql`1`)
    .execute()
  return rows.map((row) => ({ at: new Date(row.at), p50: Number(row.p50), max: Number(row.max), attempts: Number(row.attempts) }))
}
