import { sql } from 'kysely'
import type { Db } from './infrastructure/database.ts'
import { releaseStatement, type ReleaseItem } from './release-tracking.ts'

/**
 * `releaseTracking` (release-tracking.ts) for many trackings in one statement, by the same rule: the
 * trackings released here, each with its `forward_to` as written. Only two columns come back: the
 * delivery worker holds the rest of each row already (see `recordAttempts`).
 */
export async function releaseTrackings(
  db: Db,
  items: readonly ReleaseItem[],
  now: Date,
): Promise<{ id: string; forwardTo: string | null }[]> {
  if (items.length === 0) return []
  const result = await releaseStatement<{ id: string; forward_to: string | null }>(items, now, sql`t.id, t.forward_to`).execute(db)
  return result.rows.map((row) => ({ id: row.id, forwardTo: row.forward_to }))
}
