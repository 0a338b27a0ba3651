import { performance } from 'node:perf_hooks'
import type { Clock } from '../common/clock.ts'
import { SHARED_FRESH_MS } from './cache-freshness.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { accountOwner, integrationOwner, webhookSecretsOf, type WebhookSecretSet } from '../store/webhook-secrets.ts'

/** Where the Standard Webhooks secrets of callbacks come from. */
export interface WebhookSecretSource {
  /** The secrets that sign callbacks of trackings naming `integrationId`, or of the account's others. */
  secretsFor(accountId: string, integrationId: string | null): Promise<WebhookSecretSet>
  /** A secret was rotated: read every owner again. */
  forget(): void
}

/**
 * Reads secrets for the owners asked in one turn of the event loop in one query (a claim of 100
 * deliveries costs one read), opens them, and keeps them for `freshMs` (cache-freshness.ts: a second
 * where another node may rotate a secret; longer where every rotation goes through this process and
 * calls `forget()`).
 */
export function createWebhookSecretSource(
  db: Db,
  clock: Clock,
  secretsKey: Buffer | null,
  freshMs: number = SHARED_FRESH_MS,
): WebhookSecretSource {
  const cache = new Map<string, { at: number; value: Promise<WebhookSecretSet> }>()
  let batch: Map<string, { accountId: string; resolve: (s: WebhookSecretSet) => void; reject: (e: Error) => void }> | undefined

  function flush(): void {
    const asked = batch!
    batch = undefined
    const owners = [...asked].map(([owner, item]) => ({ owner, accountId: item.accountId }))
    webhookSecretsOf(db, owners, clock(), secretsKey).then(
      (found) => {
        for (const [owner, item] of asked) {
          const secrets = found.get(owner)
          if (secrets) item.resolve(secrets)
          else item.reject(new Error(`no webhook secret for ${owner}`))
        }
      },
      (error: Error) => {
        for (const item of asked.values()) item.reject(error)
      },
    )
  }

  return {
    secretsFor(accountId, integrationId) {
      const owner = integrationId ? integrationOwner(integrationId) : accountOwner(accountId)
      const cached = cache.get(owner)
      if (cached && performance.now() - cached.at < freshMs) return cached.value
      const value = new Promise<WebhookSecretSet>((resolve, reject) => {
        if (!batch) {
          batch = new Map()
          setImmediate(flush)
        }
        batch.set(owner, { accountId, resolve, reject })
      })
      value.catch(() => cache.delete(owner))
      cache.set(owner, { at: performance.now(), value })
      return value
    },
    forget: () => cache.clear(),
  }
}
