import { sql } from 'kysely'
import { NATIVE_TOKEN } from '../domain/judge.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { Db } from './infrastructure/database.ts'
import { rowToTracking, type TrackingRow } from './trackings.ts'

/**
 * Whether a chain has pending trackings at all, pending nonce-less traces (without a trace a block needs
 * none of its receipts for matching by receiver), traces of the native currency among them (only
 * those can be paid by a transaction without a log), and trackings without a nonce past their deadline.
 */
export interface PendingKinds {
  any: boolean
  traces: boolean
  nativeTraces: boolean
  /** Trackings without a nonce whose deadline is before the block's timestamp (findPastDeadline times them out). */
  pastDeadline: boolean
}

export interface BlockCandidates {
  /** The pending trackings whose (sender, nonce) or transaction hash the block holds, each once. */
  candidates: Tracking[]
  /** What the chain has pending as the candidates are read. */
  pending: PendingKinds
}

/**
 * A block's candidates and what its chain has pending, in one statement: on the embedded database each
 * statement is a turn of the service's main thread, and the pending kinds, read apart, took one while the
 * block's answer was on its way (docs/performance.md, "Fifteenth pass").
 *
 * The candidates: two index probes per transaction (trackings_identity_key, trackings_pending_transaction), so
 * their cost follows the block's size, not the number of pending trackings; written as a LATERAL join (a
 * UNION of the two sides gets a parallel plan whose worker start-up costs more than the lookups). A
 * tracking without a nonce whose deadline is before `timestamp` (the block's) is no candidate: a block past
 * its deadline does not pay it, it times it out (docs/api.md, "Payments without a nonce"). The kinds: four
 * index probes, the native currency a literal, so that the partial index of migration 0036 serves the
 * prepared statement too (the deadline's: trackings_nonceless_deadline). The kinds' row is the left side of
 * the join: a block without candidates still answers them.
 */
export async function findBlockCandidates(
  db: Db,
  chain: string,
  transactions: readonly { sender: string; nonce: bigint; hash: string }[],
  timestamp: bigint,
): Promise<BlockCandidates> {
  const senders = transactions.map((tx) => tx.sender.toLowerCase())
  const nonces = transactions.map((tx) => tx.nonce.toString())
  const hashes = transactions.map((tx) => tx.hash.toLowerCase())
  const at = timestamp.toString()
  const result = await sql<
    Partial<TrackingRow> & { pending_any: boolean; pending_traces: boolean; pending_native: boolean; pending_past_deadline: boolean }
  >`
    SELECT k.pending_any, k.pending_traces, k.pending_native, k.pending_past_deadline, t.* FROM (
      SELECT
        EXISTS (SELECT 1 FROM trackings WHERE blockchain = ${chain} AND status = 'pending') AS pending_any,
        EXISTS (
          SELECT 1 FROM trackings WHERE blockchain = ${chain} AND status = 'pending' AND nonceless AND transaction IS NULL
        ) AS pending_traces,
        EXISTS (
          SELECT 1 FROM trackings WHERE blockchain = ${chain} AND status = 'pending' AND nonceless AND transaction IS NULL
            AND lower(token) = ${sql.lit(NATIVE_TOKEN)}
        ) AS pending_native,
        EXISTS (
          SELECT 1 FROM trackings WHERE blockchain = ${chain} AND status = 'pending' AND nonceless AND deadline IS NOT NULL
            AND deadline < ${at}::numeric
        ) AS pending_past_deadline
    ) k
    LEFT JOIN LATERAL (
      SELECT c.* FROM unnest(${senders}::text[], ${nonces}::numeric[], ${hashes}::text[]) AS b(sender, nonce, hash)
      CROSS JOIN LATERAL (
        SELECT * FROM trackings s
          WHERE s.blockchain = ${chain} AND s.status = 'pending' AND s.sender = b.sender AND s.nonce = b.nonce
            AND NOT (s.nonceless AND s.deadline IS NOT NULL AND s.deadline < ${at}::numeric)
        UNION ALL
        SELECT * FROM trackings h
          WHERE h.blockchain = ${chain} AND h.status = 'pending' AND h.transaction IS NOT NULL AND h.transaction = b.hash
            AND NOT (h.nonceless AND h.deadline IS NOT NULL AND h.deadline < ${at}::numeric)
      ) c
    ) t ON true`.execute(db)
  const first = result.rows[0]
  const pending = {
    any: first?.pending_any === true,
    traces: first?.pending_traces === true,
    nativeTraces: first?.pending_native === true,
    pastDeadline: first?.pending_past_deadline === true,
  }
  const byId = new Map<string, Tracking>()
  for (const row of result.rows) if (row.id && !byId.has(row.id)) byId.set(row.id, rowToTracking(row as TrackingRow))
  return { candidates: [...byId.values()], pending }
}
