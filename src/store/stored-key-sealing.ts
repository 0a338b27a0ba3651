import { sql } from 'kysely'
import { NonRetryableError } from '../common/errors.ts'
import type { Db } from './infrastructure/database.ts'
import { isSealed, open, seal, SealedSecretError } from './sealed-secret.ts'

/** The stored signing keys cannot be read with the configured PAYWATCH_SECRETS_KEY; the message is one line. */
export class StoredKeysError extends NonRetryableError {
  override name = 'StoredKeysError'
  override readonly code: string = 'STORED_KEYS_UNREADABLE'
}

/**
 * Run at start, before any key is read. With `secretsKey`: every sealed private key must open with it
 * (else stop: a new key would break every integrator's verification), and plaintext rows written before
 * the key was set are sealed in place; answers how many. Without: a sealed row stops the start.
 */
export async function sealStoredSigningKeys(db: Db, secretsKey: Buffer | null): Promise<number> {
  if (!secretsKey) {
    const sealed = await db
      .selectFrom('service_keys')
      .select(sql<number>`1`.as('one'))
      .where('private_key_pem', 'like', 'pwenc:%')
      .unionAll(db.selectFrom('integrations').select(sql<number>`1`.as('one')).where('private_key_pem', 'like', 'pwenc:%'))
      .unionAll(db.selectFrom('webhook_secrets').select(sql<number>`1`.as('one')).where('secret', 'like', 'pwenc:%'))
      .limit(1)
      .executeTakeFirst()
    if (sealed)
      throw new StoredKeysError(
        'PAYWATCH_SECRETS_KEY is missing: the signing keys in the database are sealed; set the key they were sealed with',
      )
    return 0
  }
  const serviceRows = await db.selectFrom('service_keys').select(['name as id', 'private_key_pem']).execute()
  const integrationRows = await db.selectFrom('integrations').select(['id', 'private_key_pem']).execute()
  let count = 0
  for (const [table, column, rows] of [
    ['service_keys', 'name', serviceRows],
    ['integrations', 'id', integrationRows],
  ] as const) {
    for (const row of rows) {
      if (isSealed(row.private_key_pem)) {
        opens(row.private_key_pem, secretsKey)
        continue
      }
      // Only if still the plaintext read: another node starting at the same time may have sealed it.
      const result = await db
        .updateTable(table)
        .set({ private_key_pem: seal(row.private_key_pem, secretsKey) })
        .where(column, '=', row.id)
        .where('private_key_pem', '=', row.private_key_pem)
        .executeTakeFirst()
      count += Number(result.numUpdatedRows)
    }
  }
  return count
}

/**
 * The Standard Webhooks secrets (docs/api.md §8), current and previous, as the keys above: with
 * `secretsKey`, sealed ones must open and plaintext ones are sealed (answers how many). Without it,
 * `sealStoredSigningKeys` has refused sealed secrets already.
 */
export async function sealStoredWebhookSecrets(db: Db, secretsKey: Buffer | null): Promise<number> {
  if (!secretsKey) return 0
  const rows = await db.selectFrom('webhook_secrets').select(['owner', 'secret', 'previous_secret']).execute()
  let count = 0
  for (const row of rows) {
    for (const column of ['secret', 'previous_secret'] as const) {
      const stored = row[column]
      if (stored === null) continue
      if (isSealed(stored)) {
        opens(stored, secretsKey)
        continue
      }
      const result = await db
        .updateTable('webhook_secrets')
        .set({ [column]: seal(stored, secretsKey) })
        .where('owner', '=', row.owner)
        .where(column, '=', stored)
        .executeTakeFirst()
      count += Number(result.numUpdatedRows)
    }
  }
  return count
}

function opens(stored: string, secretsKey: Buffer): void {
  try {
    open(stored, secretsKey)
  } catch (error) {
    if (!(error instanceof SealedSecretError)) throw error
    throw new StoredKeysError('PAYWATCH_SECRETS_KEY does not open the stored signing keys: they were sealed with another key (or changed)')
  }
}
