import type { Db } from '../store/infrastructure/database.ts'
import { accountOwner, rotateWebhookSecret } from '../store/webhook-secrets.ts'
import type { Clock } from '../common/clock.ts'
import { missingAccount, type NotFound } from './admin-deps.ts'

export interface WebhookSecretDeps {
  db: Db
  clock: Clock
  /** Seals the secret in the database when set. */
  secretsKey: Buffer | null
  /** A secret changed: this process's signer reads secrets again (a CLI leaves it to the service's refresh). */
  onRotated?: () => void
}

/**
 * Creates or rotates the account's Standard Webhooks secret, which signs the callbacks of its trackings
 * without an integration (docs/api.md §8). Answered this once; the previous one keeps signing for 24 hours.
 */
export async function rotateAccountWebhookSecret(
  deps: WebhookSecretDeps,
  accountId: string,
): Promise<{ kind: 'rotated'; webhookSecret: string } | NotFound<'account'>> {
  const missing = await missingAccount(deps.db, accountId)
  if (missing) return missing
  const webhookSecret = await rotateWebhookSecret(deps.db, { owner: accountOwner(accountId), accountId }, deps.clock(), deps.secretsKey)
  deps.onRotated?.()
  return { kind: 'rotated', webhookSecret }
}
