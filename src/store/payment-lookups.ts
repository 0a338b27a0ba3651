import type { Tracking } from '../domain/tracking.ts'
import type { Db } from './database.ts'
import { rowToTracking } from './trackings.ts'

/** A payment as the widget names it: no account, sender lower-case. */
export interface PaymentKey {
  blockchain: string
  sender: string
  nonce: bigint
}

/**
 * The tracking POST /v2/payments/release names by its secret, with the hash it carried before the
 * engine judged a replacing transaction (migration 0004), if any.
 */
export async function findReleaseCandidate(
  db: Db,
  accountId: string,
  secretId: string,
): Promise<{ tracking: Tracking; replacedTransaction: string | null } | undefined> {
  const row = await db.selectFrom('trackings').selectAll()
    .where('account_id', '=', accountId)
    .where('secret_id', '=', secretId)
    .executeTakeFirst()
  return row && { tracking: rowToTracking(row), replacedTransaction: row.replaced_transaction }
}

export async function findTrackingById(db: Db, id: string): Promise<Tracking | undefined> {
  const row = await db.selectFrom('trackings').selectAll().where('id', '=', id).executeTakeFirst()
  return row && rowToTracking(row)
}

/** Every account's trackings of one payment (index trackings_payment), newest change first. */
export async function findTrackingsOfPayment(db: Db, key: PaymentKey): Promise<Tracking[]> {
  const rows = await db.selectFrom('trackings').selectAll()
    .where('blockchain', '=', key.blockchain)
    .where('sender', '=', key.sender)
    .where('nonce', '=', key.nonce.toString())
    .orderBy('updated_at', 'desc')
    .limit(20)
    .execute()
  return rows.map(rowToTracking)
}
