import { CompiledQuery, type Selectable } from 'kysely'
import { endpointUrlOf } from '../domain/endpoint-url.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { Db } from './infrastructure/database.ts'
import type { TrackingsTable } from './schema.ts'

export type TrackingRow = Selectable<TrackingsTable>

export function rowToTracking(row: TrackingRow): Tracking {
  return {
    id: row.id,
    accountId: row.account_id,
    secretId: row.secret_id,
    shape: row.shape,
    blockchain: row.blockchain,
    sender: row.sender,
    nonce: row.nonce === null ? null : BigInt(row.nonce),
    receiver: row.receiver,
    token: row.token,
    decimals: row.decimals,
    commitment: row.commitment,
    confirmations: row.confirmations,
    afterBlock: BigInt(row.after_block),
    deadline: row.deadline === null ? null : BigInt(row.deadline),
    nonceless: row.nonceless,
    amount: row.amount,
    feeAmount: row.fee_amount,
    feeReceiver: row.fee_receiver,
    transaction: row.transaction,
    payload: (row.payload as Record<string, unknown> | null) ?? null,
    callback: row.callback,
    forwardTo: row.forward_to,
    forwardOnFailure: row.forward_on_failure,
    integrationId: row.integration_id,
    linkId: row.link_id,
    shop: row.shop,
    shopifyPaymentId: row.shopify_payment_id,
    status: row.status,
    failedReason: row.failed_reason as Tracking['failedReason'],
    release: row.release,
    confirmedAt: row.confirmed_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.released_at ? { releasedAt: row.released_at } : {}),
    ...(row.reverted_ever ? { revertedAt: row.reverted_at, revertedEver: true } : {}),
  }
}

/** Columns written by `insertTrackings`, in the order of each row's parameters. */
const insertColumns = [
  'id',
  'account_id',
  'secret_id',
  'shape',
  'blockchain',
  'sender',
  'nonce',
  'receiver',
  'token',
  'decimals',
  'commitment',
  'confirmations',
  'after_block',
  'amount',
  'fee_amount',
  'fee_receiver',
  'transaction',
  'payload',
  'callback',
  'callback_origin',
  'forward_to',
  'forward_on_failure',
  'integration_id',
  'link_id',
  'shop',
  'shopify_payment_id',
  'status',
  'failed_reason',
  'confirmed_at',
  'created_at',
  'updated_at',
  'deadline',
  'nonceless',
] as const satisfies readonly (keyof TrackingsTable)[]

/** A tracking's values in the order of `insertColumns`. */
function columnValues(t: Tracking): unknown[] {
  return [
    t.id,
    t.accountId,
    t.secretId,
    t.shape,
    t.blockchain,
    t.sender,
    t.nonce === null ? null : t.nonce.toString(),
    t.receiver,
    t.token,
    t.decimals,
    t.commitment,
    t.confirmations,
    t.afterBlock.toString(),
    t.amount,
    t.feeAmount,
    t.feeReceiver,
    t.transaction,
    t.payload === null ? null : JSON.stringify(t.payload),
    t.callback,
    endpointUrlOf(t.callback),
    t.forwardTo,
    t.forwardOnFailure,
    t.integrationId,
    t.linkId,
    t.shop,
    t.shopifyPaymentId,
    t.status,
    t.failedReason,
    t.confirmedAt,
    t.createdAt,
    t.updatedAt,
    t.deadline === null ? null : t.deadline.toString(),
    t.nonceless,
  ]
}

/** A statement's parameters are counted in 16 bits by the wire protocol: larger batches take several statements. */
const MAX_ROWS_PER_INSERT = Math.floor(65_535 / insertColumns.length)

// The hottest statement of the API, its text built once per row count: building it with the query
// builder on every create cost more CPU than the rest of the request's own code.
const insertSqlByRows: string[] = []
function insertSqlFor(rows: number): string {
  let text = insertSqlByRows[rows]
  if (text === undefined) {
    const width = insertColumns.length
    const tuples = Array.from({ length: rows }, (_, row) => `(${insertColumns.map((_, i) => `$${row * width + i + 1}`).join(', ')})`)
    text = `INSERT INTO trackings (${insertColumns.map((c) => `"${c}"`).join(', ')}) VALUES ${tuples.join(', ')} ON CONFLICT DO NOTHING RETURNING id, payload`
    insertSqlByRows[rows] = text
  }
  return text
}

/**
 * Inserts new trackings in one statement; each comes back stored, or undefined where a tracking with its
 * identity or secret exists (stored before, or earlier in `ts`). Every column but the payload reads back
 * as written; the payload comes back as jsonb stores it (keys reordered, duplicates dropped), as every
 * later read will show it. Returning two columns instead of thirty spares describing and parsing whole rows.
 */
export async function insertTrackings(db: Db, ts: Tracking[]): Promise<(Tracking | undefined)[]> {
  // Rows in identity order: two nodes' statements holding the same payments then take their keys in the
  // same order, so one waits for the other instead of both deadlocking.
  const rows = ts.length > 1 ? [...ts].sort(byIdentity) : ts
  const payloads = new Map<string, Record<string, unknown> | null>()
  for (let start = 0; start < rows.length; start += MAX_ROWS_PER_INSERT) {
    const part = rows.slice(start, start + MAX_ROWS_PER_INSERT)
    const result = await db.executeQuery<Pick<TrackingRow, 'id' | 'payload'>>(
      CompiledQuery.raw(insertSqlFor(part.length), part.flatMap(columnValues)),
    )
    for (const row of result.rows) payloads.set(row.id, (row.payload as Record<string, unknown> | null) ?? null)
  }
  return ts.map((t) => (payloads.has(t.id) ? { ...t, payload: payloads.get(t.id)! } : undefined))
}

/** Nulls (a nonce-less tracking's unknown sender and nonce) first. */
const compare = <T extends string | bigint>(a: T | null, b: T | null): number =>
  a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : a > b ? 1 : 0
const byIdentity = (a: Tracking, b: Tracking): number =>
  compare(a.accountId, b.accountId) || compare(a.blockchain, b.blockchain) || compare(a.sender, b.sender) || compare(a.nonce, b.nonce)

/** Inserts a new tracking unless one exists for its identity or secret; returns it, or undefined on conflict. */
export async function insertTracking(db: Db, t: Tracking): Promise<Tracking | undefined> {
  return (await insertTrackings(db, [t]))[0]
}

// Every GET /v2/payments/{secret_id} runs it: written once, like the insert.
const selectBySecretSql = 'SELECT * FROM trackings WHERE account_id = $1 AND secret_id = $2'

export async function findTrackingBySecret(db: Db, accountId: string, secretId: string): Promise<Tracking | undefined> {
  const result = await db.executeQuery<TrackingRow>(CompiledQuery.raw(selectBySecretSql, [accountId, secretId]))
  const row = result.rows[0]
  return row && rowToTracking(row)
}

// One text for any number of keys (prepared once): the keys as two arrays.
const selectBySecretsSql =
  'SELECT trackings.* FROM unnest($1::text[], $2::text[]) AS k(account_id, secret_id) ' +
  'JOIN trackings ON trackings.account_id = k.account_id AND trackings.secret_id = k.secret_id'

/** `findTrackingBySecret` for several keys in one statement, in their order. */
export async function findTrackingsBySecrets(db: Db, keys: { accountId: string; secretId: string }[]): Promise<(Tracking | undefined)[]> {
  const result = await db.executeQuery<TrackingRow>(
    CompiledQuery.raw(selectBySecretsSql, [keys.map((k) => k.accountId), keys.map((k) => k.secretId)]),
  )
  const found = new Map(result.rows.map((row) => [`${row.account_id}\n${row.secret_id}`, row]))
  return keys.map((k) => {
    const row = found.get(`${k.accountId}\n${k.secretId}`)
    return row && rowToTracking(row)
  })
}

export async function findTrackingByIdentity(
  db: Db,
  key: { accountId: string; blockchain: string; sender: string; nonce: bigint },
): Promise<Tracking | undefined> {
  const row = await db
    .selectFrom('trackings')
    .selectAll()
    .where('account_id', '=', key.accountId)
    .where('blockchain', '=', key.blockchain)
    .where('sender', '=', key.sender)
    .where('nonce', '=', key.nonce.toString())
    .executeTakeFirst()
  return row && rowToTracking(row)
}

/**
 * In one query, the account's tracking of a payment (blockchain, sender, nonce) or, when there is
 * none, the one under `secretId`: the two unique keys a new tracking can collide with.
 */
export async function findTrackingByIdentityOrSecret(
  db: Db,
  key: { accountId: string; blockchain: string; sender: string | null; nonce: bigint | null; secretId: string },
): Promise<Tracking | undefined> {
  // A nonce-less request has no (sender, nonce) identity: its secret alone.
  if (key.sender === null || key.nonce === null) return findTrackingBySecret(db, key.accountId, key.secretId)
  const nonce = key.nonce.toString()
  const rows = await db
    .selectFrom('trackings')
    .selectAll()
    .where('account_id', '=', key.accountId)
    .where((eb) =>
      eb.or([
        eb.and([eb('blockchain', '=', key.blockchain), eb('sender', '=', key.sender), eb('nonce', '=', nonce)]),
        eb('secret_id', '=', key.secretId),
      ]),
    )
    .execute()
  const row = rows.find((r) => r.blockchain === key.blockchain && r.sender === key.sender && String(r.nonce) === nonce) ?? rows[0]
  return row && rowToTracking(row)
}

/** Turns a trace into a tracked transaction; only while it is still a pending trace. */
export async function attachTransaction(db: Db, id: string, transaction: string, now: Date): Promise<Tracking | undefined> {
  const row = await db
    .updateTable('trackings')
    .set({ transaction, updated_at: now })
    .where('id', '=', id)
    .where('transaction', 'is', null)
    // A trace that completed meanwhile (timed out) is final: its record must not change.
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst()
  return row && rowToTracking(row)
}
