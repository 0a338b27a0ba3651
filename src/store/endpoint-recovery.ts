import { sql } from 'kysely'
import type { Db } from './infrastructure/database.ts'

/**
 * Sends again, now, every delivery to one endpoint of an account whose last attempt failed (still
 * waiting for a retry) or that died, since `since`: a waiting one is brought forward; a dead one gets a
 * new delivery of the same event, unless its tracking already has one waiting. Answers how many.
 */
export async function recoverEndpointDeliveries(db: Db, accountId: string, url: string, since: Date, now: Date): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const forward = await sql`
      UPDATE deliveries AS d SET next_attempt_at = ${now}, due_at = ${now}, updated_at = ${now}
      FROM trackings t
      WHERE t.id = d.tracking_id AND t.account_id = ${accountId} AND t.callback_origin = ${url}
        AND d.state = 'due' AND d.attempts > 0 AND d.last_attempt_at >= ${since} AND d.claimed_by IS NULL`.execute(trx)
    const again = await sql`
      INSERT INTO deliveries (id, tracking_id, reason, event, requested_by, next_attempt_at, due_at, created_at, updated_at)
      SELECT gen_random_uuid()::text, dead.tracking_id, 'redeliver', dead.event, 'recovery', ${now}, ${now}, ${now}, ${now}
      FROM (SELECT DISTINCT d.tracking_id, d.event FROM deliveries d JOIN trackings t ON t.id = d.tracking_id
        WHERE t.account_id = ${accountId} AND t.callback_origin = ${url}
          AND d.state = 'dead' AND d.finished_at >= ${since}) AS dead
      WHERE NOT EXISTS (SELECT 1 FROM deliveries w WHERE w.tracking_id = dead.tracking_id AND w.state = 'due'
        AND w.event IS NOT DISTINCT FROM dead.event)`.execute(trx)
    return Number(forward.numAffectedRows ?? 0n) + Number(again.numAffectedRows ?? 0n)
  })
}
