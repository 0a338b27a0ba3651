import { sql } from 'kysely'
import type { Tracking } from '../domain/tracking.ts'
import type { Db } from './infrastructure/database.ts'
import { rowToTracking, type TrackingRow } from './trackings.ts'

/**
 * The lookups of matching by receiver (docs/architecture.md, "Matching by receiver"): every one is a
 * single statement per block over a partial index of the pending nonce-less trackings (migration 0031),
 * so a block costs the same whatever the number of pending trackings.
 */

/**
 * The pending nonce-less traces of `chain` that expect one of `receivers` and may be paid in `block`
 * (mined after their `after_block`, by their deadline) and have not found their payment yet (no
 * match), oldest first: one statement, one index probe per touched receiver.
 */
export async function findTracesByReceivers(
  db: Db,
  chain: string,
  receivers: readonly string[],
  block: { number: bigint; timestamp: bigint },
): Promise<Tracking[]> {
  if (receivers.length === 0) return []
  const result = await sql<TrackingRow>`
    SELECT t.* FROM trackings t
    WHERE t.blockchain = ${chain} AND t.status = 'pending' AND t.nonceless AND t.transaction IS NULL
      AND t.receiver = ANY(${[...receivers]}::text[])
      AND t.after_block < ${block.number.toString()}::numeric
      AND (t.deadline IS NULL OR t.deadline >= ${block.timestamp.toString()}::numeric)
      AND NOT EXISTS (SELECT 1 FROM tracking_matches m WHERE m.tracking_id = t.id)
    ORDER BY t.created_at, t.id`.execute(db)
  return result.rows.map(rowToTracking)
}

/**
 * The pending trackings without a nonce of `chain` (traces, and those that name their transaction) whose
 * deadline is before `timestamp` (the block's) and that found no payment (no match): the block is the
 * first past their deadline that this node saw. Not those whose check of the chain before they were
 * stored is still owed (owed_checks, migration 0039): that check may yet find a payment mined before the
 * deadline (a trace's search times it out itself, at the first block past the deadline it reads).
 */
export async function findPastDeadline(db: Db, chain: string, timestamp: bigint): Promise<Tracking[]> {
  const result = await sql<TrackingRow>`
    SELECT t.* FROM trackings t
    WHERE t.blockchain = ${chain} AND t.status = 'pending' AND t.nonceless AND t.deadline IS NOT NULL
      AND t.deadline < ${timestamp.toString()}::numeric
      AND NOT EXISTS (SELECT 1 FROM tracking_matches m WHERE m.tracking_id = t.id)
      AND NOT EXISTS (SELECT 1 FROM owed_checks o WHERE o.tracking_id = t.id)
    ORDER BY t.created_at, t.id`.execute(db)
  return result.rows.map(rowToTracking)
}

/**
 * A nonce-less tracking's named transaction was seen: its sender and nonce become the tracking's, so
 * that the block that consumes that nonce (the transaction or its replacement) finds it. Returns the
 * updated tracking; undefined when it changed meanwhile, or when the account already tracks that
 * payment with a nonce (the unique identity: the transaction belongs to that tracking, this one is
 * then judged by its hash alone).
 */
export async function fillIdentity(db: Db, id: string, sender: string, nonce: bigint): Promise<Tracking | undefined> {
  const result = await sql<TrackingRow>`
    UPDATE trackings t SET sender = ${sender}, nonce = ${nonce.toString()}::numeric
    WHERE t.id = ${id} AND t.status = 'pending' AND t.nonce IS NULL AND (t.sender IS NULL OR t.sender = ${sender})
      AND NOT EXISTS (
        SELECT 1 FROM trackings o
        WHERE o.account_id = t.account_id AND o.blockchain = t.blockchain AND o.sender = ${sender} AND o.nonce = ${nonce.toString()}::numeric
      )
    RETURNING t.*`.execute(db)
  const row = result.rows[0]
  return row && rowToTracking(row)
}

/**
 * Which of `hashes` already belong to a tracking of the account (named, paid, or found and waiting for
 * its commitment): a trace caught up on past blocks must not take a transaction another tracking of the
 * account already took (one transaction pays one tracking of an account).
 */
export async function findClaimedTransactions(db: Db, accountId: string, chain: string, hashes: readonly string[]): Promise<Set<string>> {
  if (hashes.length === 0) return new Set()
  const wanted = hashes.map((h) => h.toLowerCase())
  const result = await sql<{ transaction: string }>`
    SELECT t.transaction FROM trackings t
      WHERE t.account_id = ${accountId} AND t.blockchain = ${chain} AND t.transaction = ANY(${wanted}::text[])
    UNION
    SELECT m.transaction FROM tracking_matches m JOIN trackings t ON t.id = m.tracking_id
      WHERE t.account_id = ${accountId} AND m.chain = ${chain} AND m.transaction = ANY(${wanted}::text[])`.execute(db)
  return new Set(result.rows.map((row) => row.transaction))
}
