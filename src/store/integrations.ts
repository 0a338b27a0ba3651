import type { Db } from './infrastructure/database.ts'
import { newId } from './ids.ts'
import { open, seal } from './sealed-secret.ts'

/** An account's integration: callbacks of trackings naming it are signed with its own key. */
export interface Integration {
  id: string
  accountId: string
  name: string | null
  publicKeyPem: string
  createdAt: Date
  /** payment.reverted / payment.reconfirmed callbacks are sent (docs/api.md §8). */
  reversalEvents: boolean
}

const toIntegration = (row: {
  id: string
  account_id: string
  name: string | null
  public_key_pem: string
  created_at: Date
  reversal_events: boolean
}): Integration => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  publicKeyPem: row.public_key_pem,
  createdAt: row.created_at,
  reversalEvents: row.reversal_events,
})

const publicColumns = ['id', 'account_id', 'name', 'public_key_pem', 'created_at', 'reversal_events'] as const

export async function createIntegration(
  db: Db,
  accountId: string,
  name: string | null,
  keys: { privateKeyPem: string; publicKeyPem: string },
  secretsKey: Buffer | null,
  reversalEvents = false,
): Promise<Integration> {
  const row = await db
    .insertInto('integrations')
    .values({
      id: newId(),
      account_id: accountId,
      name,
      private_key_pem: secretsKey ? seal(keys.privateKeyPem, secretsKey) : keys.privateKeyPem,
      public_key_pem: keys.publicKeyPem,
      reversal_events: reversalEvents,
    })
    .returning(publicColumns)
    .executeTakeFirstOrThrow()
  return toIntegration(row)
}

/** The integration by id; with `accountId`, only when it belongs to that account. */
export async function findIntegration(db: Db, id: string, accountId?: string): Promise<Integration | undefined> {
  let query = db.selectFrom('integrations').select(publicColumns).where('id', '=', id)
  if (accountId !== undefined) query = query.where('account_id', '=', accountId)
  const row = await query.executeTakeFirst()
  return row && toIntegration(row)
}

export async function listIntegrations(db: Db, accountId: string): Promise<Integration[]> {
  const rows = await db
    .selectFrom('integrations')
    .select(publicColumns)
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  return rows.map(toIntegration)
}

/** The private key (PEM) an integration signs with, opened when sealed; only the signer reads it. */
export async function integrationPrivateKey(db: Db, id: string, secretsKey: Buffer | null): Promise<string | undefined> {
  const row = await db.selectFrom('integrations').select('private_key_pem').where('id', '=', id).executeTakeFirst()
  return row && open(row.private_key_pem, secretsKey)
}
