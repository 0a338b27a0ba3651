import type { Db } from '../store/infrastructure/database.ts'
import * as integrations from '../store/integrations.ts'
import type { Integration } from '../store/integrations.ts'
import type { KeyPairPem } from '../store/service-keys.ts'
import { sealStoredSigningKeys } from '../store/stored-key-sealing.ts'
import { integrationOwner, rotateWebhookSecret } from '../store/webhook-secrets.ts'
import type { Clock } from '../common/clock.ts'
import { missingAccount, notFound, type NotFound } from './admin-deps.ts'

export interface IntegrationDeps {
  db: Db
  clock: Clock
  /** The callbacks' RSA-2048 key generator, injected: admin may not import the callbacks subsystem. */
  generateKeyPair: () => Promise<KeyPairPem>
  /** Seals the new private key in the database when set. */
  secretsKey: Buffer | null
  /**
   * Checks the stored keys against `secretsKey` before a new one is stored. The service did so at its
   * start; a one-off CLI process has not, and a missing or wrong key must stop it before it stores a
   * key sealed with it.
   */
  checkStoredKeys: boolean
}

/**
 * An integration with its own callback-signing key (docs/api.md §6) and Standard Webhooks secret
 * (docs/api.md §8); the private key never leaves the database, the secret is answered this once. The
 * name is taken as read (the admin API with `readIntegrationRequest`, the CLI verbatim).
 */
export async function createIntegration(
  deps: IntegrationDeps,
  accountId: string,
  name: string | null,
  options: { reversalEvents?: boolean } = {},
): Promise<{ kind: 'created'; integration: Integration; webhookSecret: string } | NotFound<'account'>> {
  const missing = await missingAccount(deps.db, accountId)
  if (missing) return missing
  if (deps.checkStoredKeys) await sealStoredSigningKeys(deps.db, deps.secretsKey)
  const keys = await deps.generateKeyPair()
  const integration = await integrations.createIntegration(deps.db, accountId, name, keys, deps.secretsKey, options.reversalEvents ?? false)
  const webhookSecret = await rotateWebhookSecret(
    deps.db,
    { owner: integrationOwner(integration.id), accountId },
    deps.clock(),
    deps.secretsKey,
  )
  return { kind: 'created', integration, webhookSecret }
}

export async function listIntegrations(
  deps: { db: Db },
  accountId: string,
): Promise<{ kind: 'listed'; integrations: Integration[] } | NotFound<'account'>> {
  const missing = await missingAccount(deps.db, accountId)
  if (missing) return missing
  return { kind: 'listed', integrations: await integrations.listIntegrations(deps.db, accountId) }
}

export async function showIntegration(
  deps: { db: Db },
  integrationId: string,
): Promise<{ kind: 'found'; integration: Integration } | NotFound<'integration'>> {
  const integration = await integrations.findIntegration(deps.db, integrationId)
  return integration ? { kind: 'found', integration } : notFound('integration')
}
