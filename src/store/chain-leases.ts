import { sql } from 'kysely'
import { NonRetryableError } from '../common/errors.ts'
import type { Db } from './infrastructure/database.ts'

/** What a follower's writes carry: the lease they are made under. */
export interface WriteFence {
  chain: string
  holder: string
  token: string
}

/**
 * This node no longer holds the chain's lease (it expired, or another node took it over): the write
 * was refused and the follower must stop and stand by. Never retried.
 */
export class LeadershipLostError extends NonRetryableError {
  override name = 'LeadershipLostError'
  override readonly code: string = 'LEADERSHIP_LOST'
  readonly chain: string
  constructor(chain: string) {
    super(`this node no longer leads chain ${chain}: write refused`)
    this.chain = chain
  }
}

export interface AcquireOptions {
  ttlMs: number
  /**
   * The database belongs to this process alone (embedded): a lease left by another holder is a
   * previous run's, taken over at once.
   */
  exclusive: boolean
}

/**
 * Takes the chain's lease in one statement when it is free, expired, already ours, or its holder's
 * lease connection is gone (a killed node's sockets close at once, its lease need not run out).
 * Returns the new fencing token, or undefined while another node holds it.
 */
export async function acquireLease(db: Db, chain: string, holder: string, options: AcquireOptions): Promise<string | undefined> {
  const result = await sql<{ token: string }>`
    INSERT INTO chain_leases AS l (chain, holder, holder_pid, token, acquired_at, expires_at)
    VALUES (${chain}, ${holder}, pg_backend_pid(), 1, now(), now() + ${options.ttlMs} * interval '1 millisecond')
    ON CONFLICT (chain) DO UPDATE SET
      holder = excluded.holder, holder_pid = excluded.holder_pid, token = l.token + 1,
      acquired_at = excluded.acquired_at, expires_at = excluded.expires_at
    WHERE l.expires_at <= now() OR l.holder = excluded.holder OR ${options.exclusive}
      OR NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = l.holder_pid)
    RETURNING token::text AS token`.execute(db)
  return result.rows[0]?.token
}

/** Extends the lease from the database's clock; false when it expired or another node holds it now. */
export async function renewLease(db: Db, fence: WriteFence, ttlMs: number): Promise<boolean> {
  const result = await sql`
    UPDATE chain_leases SET expires_at = now() + ${ttlMs} * interval '1 millisecond', holder_pid = pg_backend_pid()
    WHERE chain = ${fence.chain} AND holder = ${fence.holder} AND token = ${fence.token} AND expires_at > now()`.execute(db)
  return Number(result.numAffectedRows ?? 0) === 1
}

/** Gives the lease up (graceful stop) and tells the waiting nodes at once. */
export async function releaseLease(db: Db, fence: WriteFence, notifyChannel: string | undefined): Promise<void> {
  await sql`DELETE FROM chain_leases WHERE chain = ${fence.chain} AND token = ${fence.token}`.execute(db)
  if (notifyChannel) await sql`SELECT pg_notify(${notifyChannel}, ${fence.chain})`.execute(db)
}

/** The chain's lease as stored (diagnostics, tests). */
export async function findLease(db: Db, chain: string) {
  return db.selectFrom('chain_leases').selectAll().where('chain', '=', chain).executeTakeFirst()
}

/**
 * Inside a write transaction: proves the lease is still this one and keeps it so until commit (a
 * take-over waits for the write, and the write never lands after a take-over). A node frozen in the
 * middle of the transaction must not block the take-over for long: its session is ended by the
 * database after 5 s idle in the transaction.
 */
export async function holdFence(trx: Db, fence: WriteFence): Promise<void> {
  const result = await fenceHold(fence).execute(trx)
  if (result.rows.length === 0) throw new LeadershipLostError(fence.chain)
}

/** The query of `holdFence`: one row while the lease is this one (a part of a larger statement, complete-tracking.ts). */
export function fenceHold(fence: WriteFence) {
  return sql`
    SELECT set_config('idle_in_transaction_session_timeout', '5000', true) FROM chain_leases
    WHERE chain = ${fence.chain} AND holder = ${fence.holder} AND token = ${fence.token} AND expires_at > now()
    FOR SHARE`
}

/** Runs `work` under the fence when one is given (the follower's writes), as it is otherwise. */
export function fenced<T>(db: Db, fence: WriteFence | undefined, work: (db: Db) => Promise<T>): Promise<T> {
  if (!fence) return work(db)
  return db.transaction().execute(async (trx) => {
    await holdFence(trx, fence)
    return work(trx)
  })
}
