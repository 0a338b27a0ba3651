// Nonce-less pending trackings inserted in bulk for the benchmarks (creating a million through the API
// would take the better part of an hour): INSERT … SELECT generate_series, one statement. Each has a
// deadline (a day ahead) and no nonce; every second one no sender either; created over the last 20
// hours (the sweeper's time-out is 24 h), at whole milliseconds as the API stores them.
import { sql } from 'kysely'
import type { Db } from '../src/store/infrastructure/database.ts'

export async function insertNoncelessPending(
  db: Db,
  options: { accountId: string; count: number; tag: string; token: string },
): Promise<void> {
  if (options.count <= 0) return
  const tag = `nl${options.tag}`
  await sql`
    INSERT INTO trackings (id, account_id, secret_id, shape, blockchain, sender, nonce, receiver, token, decimals,
      commitment, confirmations, after_block, amount, deadline, status, created_at, updated_at, nonceless)
    SELECT md5(${tag} || 'id' || g), ${options.accountId}, md5(${tag} || 'secret' || g), 'current', 'ethereum',
      CASE WHEN g % 2 = 0 THEN '0x' || substr(md5(${tag} || 's' || g), 1, 32) || substr(md5(${tag} || 't' || g), 1, 8) END,
      NULL, '0x' || substr(md5(${tag} || 'r' || g), 1, 32) || substr(md5(${tag} || 'q' || g), 1, 8), ${options.token}, 18,
      'confirmed', 1, 0, '1', extract(epoch FROM now())::bigint + 86400, 'pending',
      date_trunc('milliseconds', now() - (g % 72000) * interval '1 second'), now(), true
    FROM generate_series(1, ${options.count}::int) AS g`.execute(db)
  await forgetOwedChecks(db)
}

/**
 * Trackings a benchmark inserts stand for ones followed long since: no check against the chain is owed to them
 * (migration 0039 stores one with every pending tracking), else the follower would run them during the run.
 */
export async function forgetOwedChecks(db: Db): Promise<void> {
  await sql`DELETE FROM owed_checks`.execute(db)
}
