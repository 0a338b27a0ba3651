import { sql } from 'kysely'
import type { MinedTransaction } from '../domain/judge.ts'
import type { Tracking } from '../domain/tracking.ts'
import { fenced, type WriteFence } from './chain-leases.ts'
import type { Db } from './infrastructure/database.ts'
import { rowToTracking } from './trackings.ts'

/**
 * A pending tracking whose transaction was found. `evidence` is what the judge needs to re-judge it
 * on every new block without asking the RPC again; null while it could not be read (the RPC
 * failed): then the hashes are read again on the next block.
 */
export interface TrackingMatch {
  trackingId: string
  chain: string
  blockNumber: bigint
  blockHash: string
  /** The judged transaction (the consumer of the nonce, else the given one). */
  transaction: string
  /** `pastDeadline`: a nonce-less trace's deadline passed in this match's block (`transaction` is then ''). */
  evidence: { given: MinedTransaction | null; consumer: MinedTransaction | null; pastDeadline?: { blockNumber: bigint } } | null
  /** When `evidence` is null: the hashes to read again. */
  pendingHashes: { given: string | null; consumer: string | null } | null
}

/**
 * `tracking_matches` as the chain engine uses it: the matched trackings it re-judges, and every write
 * it makes. This module is the table's one writer (the completion's delete in its transaction calls
 * `deleteMatches` too); the engine holds it through this interface, so that its judging can be run
 * against matches kept in memory.
 */
export interface MatchStore {
  /** The still-pending trackings of `chain` with a found transaction, and their matches. */
  matched(chain: string): Promise<{ tracking: Tracking; match: TrackingMatch }[]>
  save(match: TrackingMatch, fence?: WriteFence): Promise<void>
  drop(trackingIds: string[], fence?: WriteFence): Promise<void>
  /** A reorg dropped the blocks above `number`: their trackings are searched for again. Returns their ids. */
  dropAbove(chain: string, number: bigint, fence?: WriteFence): Promise<string[]>
}

export function createMatchStore(db: Db, clock: () => Date): MatchStore {
  return {
    matched: (chain) => findMatchedTrackings(db, chain),
    save: (match, fence) => saveMatch(db, match, clock(), fence),
    drop: (ids, fence) => deleteMatches(db, ids, fence),
    dropAbove: (chain, number, fence) => deleteMatchesAbove(db, chain, number, fence),
  }
}

/** bigints survive the jsonb round trip as {"$n": "decimal"}. */
const encode = (value: unknown): string => JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? { $n: v.toString() } : v))
const decode = (value: unknown): unknown =>
  JSON.parse(typeof value === 'string' ? value : JSON.stringify(value), (_key, v: unknown) =>
    v !== null && typeof v === 'object' && typeof (v as { $n?: unknown }).$n === 'string' && Object.keys(v).length === 1
      ? BigInt((v as { $n: string }).$n)
      : v,
  )

/** The still-pending trackings of `chain` with a found transaction, and their matches. */
export async function findMatchedTrackings(db: Db, chain: string): Promise<{ tracking: Tracking; match: TrackingMatch }[]> {
  const rows = await db
    .selectFrom('tracking_matches as m')
    .innerJoin('trackings as t', 't.id', 'm.tracking_id')
    .selectAll('t')
    .select([
      'm.chain as m_chain',
      'm.block_number as m_block_number',
      'm.block_hash as m_block_hash',
      'm.transaction as m_transaction',
      'm.evidence as m_evidence',
    ])
    .where('m.chain', '=', chain)
    .where('t.status', '=', 'pending')
    .orderBy('m.block_number')
    .execute()
  return rows.map((row) => {
    const stored = decode(row.m_evidence) as {
      given?: MinedTransaction | null
      consumer?: MinedTransaction | null
      pendingHashes?: TrackingMatch['pendingHashes']
      pastDeadline?: { blockNumber: bigint }
    }
    return {
      tracking: rowToTracking(row),
      match: {
        trackingId: row.id,
        chain: row.m_chain,
        blockNumber: BigInt(row.m_block_number),
        blockHash: row.m_block_hash,
        transaction: row.m_transaction,
        evidence: stored.pendingHashes
          ? null
          : {
              given: stored.given ?? null,
              consumer: stored.consumer ?? null,
              ...(stored.pastDeadline ? { pastDeadline: stored.pastDeadline } : {}),
            },
        pendingHashes: stored.pendingHashes ?? null,
      },
    }
  })
}

export async function saveMatch(db: Db, match: TrackingMatch, now: Date, fence?: WriteFence): Promise<void> {
  const evidence = encode(match.evidence ?? { pendingHashes: match.pendingHashes })
  await fenced(db, fence, (db) =>
    db
      .insertInto('tracking_matches')
      .values({
        tracking_id: match.trackingId,
        chain: match.chain,
        block_number: match.blockNumber,
        block_hash: match.blockHash,
        transaction: match.transaction,
        evidence,
        created_at: now,
      })
      .onConflict((oc) =>
        oc.column('tracking_id').doUpdateSet({
          chain: match.chain,
          block_number: match.blockNumber,
          block_hash: match.blockHash,
          transaction: match.transaction,
          evidence,
        }),
      )
      .execute(),
  )
}

export async function deleteMatches(db: Db, trackingIds: string[], fence?: WriteFence): Promise<void> {
  if (trackingIds.length === 0) return
  await fenced(db, fence, (db) => matchesDelete(db, trackingIds).execute())
}

/** The delete of `deleteMatches`, unexecuted (a part of a completion's one statement, completion-writes.ts). */
export function matchesDelete(db: Db, trackingIds: readonly string[]) {
  return db.deleteFrom('tracking_matches').where('tracking_id', 'in', trackingIds)
}

/** A reorg dropped the blocks above `number`: their trackings are searched for again. Returns their ids. */
export async function deleteMatchesAbove(db: Db, chain: string, number: bigint, fence?: WriteFence): Promise<string[]> {
  const rows = await fenced(db, fence, (db) =>
    db
      .deleteFrom('tracking_matches')
      .where('chain', '=', chain)
      .where('block_number', '>', number.toString())
      .returning('tracking_id')
      .execute(),
  )
  return rows.map((row) => row.tracking_id)
}

/**
 * Pending trackings registered more than `timeoutSec` ago, oldest first (the sweeper's time-outs), on
 * the database's clock alone (`registered_at`, `now()`): a node whose clock stepped neither times out
 * young trackings nor keeps old ones. A tracking whose transaction was found (mined, confirming) is
 * left to its confirmations for one more `timeoutSec` from when it was found (`matched_at`).
 */
export async function findExpiredTrackings(db: Db, timeoutSec: number, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }>`
    SELECT t.id FROM trackings t
    WHERE t.status = 'pending' AND t.registered_at < now() - make_interval(secs => ${timeoutSec})
      AND NOT EXISTS (
        SELECT 1 FROM tracking_matches m
        WHERE m.tracking_id = t.id AND m.matched_at >= now() - make_interval(secs => ${timeoutSec}))
    ORDER BY t.registered_at
    LIMIT ${limit}`.execute(db)
  return rows.rows.map((row) => row.id)
}

/** A tracking by id while it is still pending (the fast path's retries re-read it). */
export async function findPendingTracking(db: Db, id: string): Promise<Tracking | undefined> {
  const row = await db.selectFrom('trackings').selectAll().where('id', '=', id).where('status', '=', 'pending').executeTakeFirst()
  return row && rowToTracking(row)
}

/** Those of `ids` still pending, in one query (the fast path's line re-reads a batch of them). */
export async function findPendingTrackings(db: Db, ids: readonly string[]): Promise<Tracking[]> {
  if (ids.length === 0) return []
  const rows = await db.selectFrom('trackings').selectAll().where('id', 'in', ids).where('status', '=', 'pending').execute()
  return rows.map(rowToTracking)
}
