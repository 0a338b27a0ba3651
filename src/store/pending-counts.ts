import { sql } from 'kysely'
import type { Db } from './infrastructure/database.ts'

/**
 * Up to this many pending trackings are counted exactly; past it the count is the planner's estimate.
 * Counting a million rows reads a million index entries on every dashboard view and metrics scrape.
 */
export const EXACT_PENDING_LIMIT = 10_000

export interface PendingCounts {
  /** Pending trackings per chain. */
  counts: Map<string, number>
  /** True when the counts are the planner's estimates (more than EXACT_PENDING_LIMIT pending). */
  estimated: boolean
}

/**
 * Pending trackings per chain, in bounded work at any table size: the planner's estimate per chain
 * first (statistics `trackings_chain_status`, migration 0029, kept fresh by autovacuum's analyze);
 * when that says few, an exact count that stops after EXACT_PENDING_LIMIT + 1 rows. Chains with no
 * pending tracking are absent when counted exactly.
 */
export async function countPendingTrackings(db: Db, chains: readonly string[]): Promise<PendingCounts> {
  const estimates = new Map<string, number>()
  for (const chain of chains) estimates.set(chain, await estimatePending(db, chain))
  const estimatedTotal = [...estimates.values()].reduce((a, b) => a + b, 0)
  if (estimatedTotal <= 2 * EXACT_PENDING_LIMIT) {
    const rows = await sql<{ blockchain: string; count: string }>`
      SELECT blockchain, count(*) AS count FROM (
        SELECT blockchain FROM trackings WHERE status = 'pending' LIMIT ${EXACT_PENDING_LIMIT + 1}
      ) AS p GROUP BY blockchain`.execute(db)
    const counts = new Map(rows.rows.map((row) => [row.blockchain, Number(row.count)]))
    const total = [...counts.values()].reduce((a, b) => a + b, 0)
    if (total <= EXACT_PENDING_LIMIT) return { counts, estimated: false }
    // Statistics older than the rows counted: each chain has at least what the capped count saw.
    for (const [chain, count] of counts) if (estimates.has(chain)) estimates.set(chain, Math.max(estimates.get(chain)!, count))
  }
  return { counts: estimates, estimated: true }
}

/** The planner's row estimate for one chain's pending trackings: reads statistics, never the table. */
async function estimatePending(db: Db, chain: string): Promise<number> {
  // A literal, not a parameter: a prepared statement's generic plan would estimate without the value.
  const plan = await sql<{ 'QUERY PLAN': unknown }>`EXPLAIN (FORMAT JSON)
    SELECT 1 FROM trackings WHERE blockchain = ${sql.lit(chain)} AND status = 'pending'`.execute(db)
  const raw = plan.rows[0]?.['QUERY PLAN']
  const parsed = (typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: { 'Plan Rows': number } }]
  return Math.round(parsed[0].Plan['Plan Rows'])
}
