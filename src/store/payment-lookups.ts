import type { Tracking } from '../domain/tracking.ts'
import type { Db } from './infrastructure/database.ts'
import { rowToTracking } from './trackings.ts'

/** A payment as the widget names it: no account, sender lower-case. */
export interface PaymentKey {
  blockchain: string
  sender: string
  nonce: bigint
}

/** A payment as the current widget (DePay 13) names it, without a nonce: addresses lower-case. */
export interface DeadlineKey {
  blockchain: string
  sender: string
  receiver: string
  deadline: bigint
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
  const row = await db
    .selectFrom('trackings')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('secret_id', '=', secretId)
    .executeTakeFirst()
  return row && { tracking: rowToTracking(row), replacedTransaction: row.replaced_transaction }
}

export async function findTrackingById(db: Db, id: string): Promise<Tracking | undefined> {
  const row = await db.selectFrom('trackings').selectAll().where('id', '=', id).executeTakeFirst()
  return row && rowToTracking(row)
}

/**
 * Of each payment, the tracking created first (by any account), in one statement: the one the widget
 * channel of that payment follows. Creation ties (the same millisecond) are broken by id, so that every
 * node picks the same one. Payments nobody tracks are missing from the answer.
 */
export async function findFirstTrackingsOfPayments(db: Db, keys: PaymentKey[]): Promise<Tracking[]> {
  if (keys.length === 0) return []
  const rows = await db
    .selectFrom('trackings')
    .selectAll()
    .where((eb) =>
      eb.or(
        keys.map((key) =>
          eb.and([eb('blockchain', '=', key.blockchain), eb('sender', '=', key.sender), eb('nonce', '=', key.nonce.toString())]),
        ),
      ),
    )
    .distinctOn(['blockchain', 'sender', 'nonce'])
    .orderBy('blockchain')
    .orderBy('sender')
    .orderBy('nonce')
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  return rows.map(rowToTracking)
}

/**
 * Of each (blockchain, sender, receiver, deadline), the tracking created first (by any account), in one
 * statement: the one the widget channel of that key follows (ties broken by id, as above). Answered as
 * pairs, since the record does not carry the deadline it was found by. Keys nobody tracks are missing.
 * Served by the partial index `trackings_widget_deadline` (migration 0026).
 */
export async function findFirstTrackingsByDeadline(db: Db, keys: DeadlineKey[]): Promise<{ key: DeadlineKey; tracking: Tracking }[]> {
  if (keys.length === 0) return []
  const rows = await db
    .selectFrom('trackings')
    .selectAll()
    .where('deadline', 'is not', null)
    .where((eb) =>
      eb.or(
        keys.map((key) =>
          eb.and([
            eb('blockchain', '=', key.blockchain),
            eb('receiver', '=', key.receiver),
            eb('deadline', '=', key.deadline.toString()),
            eb('sender', '=', key.sender),
          ]),
        ),
      ),
    )
    .distinctOn(['blockchain', 'receiver', 'deadline', 'sender'])
    .orderBy('blockchain')
    .orderBy('receiver')
    .orderBy('deadline')
    .orderBy('sender')
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  return rows.map((row) => ({
    key: { blockchain: row.blockchain, sender: row.sender as string, receiver: row.receiver, deadline: BigInt(row.deadline!) },
    tracking: rowToTracking(row),
  }))
}
