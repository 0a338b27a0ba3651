import { randomBytes } from 'node:crypto'
import type { Db } from './infrastructure/database.ts'
import { open, seal } from './sealed-secret.ts'

/** How long the previous secret still signs after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000

/** `whsec_` + base64 of 32 random bytes: the Standard Webhooks secret format. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`

/** Whose secret: an integration's, or an account's default for trackings without an integration. */
export const integrationOwner = (integrationId: string): string => `integration:${integrationId}`
export const accountOwner = (accountId: string): string => `account:${accountId}`

/** The secrets that sign an owner's callbacks: the current one, and the previous one until `previousUntil`. */
export interface WebhookSecretSet {
  secret: string
  previous: string | null
  previousUntil: Date | null
}

/**
 * Stores a new secret for `owner` (creating or rotating) and answers it in plaintext, the only time it is
 * shown. A rotated-out secret keeps signing for ROTATION_OVERLAP_MS. Sealed under `secretsKey` when set.
 */
export async function rotateWebhookSecret(
  db: Db,
  owner: { owner: string; accountId: string },
  now: Date,
  secretsKey: Buffer | null,
): Promise<string> {
  const secret = newWebhookSecret()
  const stored = secretsKey ? seal(secret, secretsKey) : secret
  const until = new Date(now.getTime() + ROTATION_OVERLAP_MS)
  await db
    .insertInto('webhook_secrets')
    .values({ owner: owner.owner, account_id: owner.accountId, secret: stored, created_at: now })
    .onConflict((oc) =>
      oc.column('owner').doUpdateSet((eb) => ({
        previous_secret: eb.ref('webhook_secrets.secret'),
        previous_until: until,
        secret: stored,
        created_at: now,
      })),
    )
    .execute()
  return secret
}

/**
 * The secrets of the given owners, opened. An owner without one (an integration created before secrets
 * existed, an account that never asked for its secret) gets one now: every callback carries the headers,
 * and rotating shows the account its secret.
 */
export async function webhookSecretsOf(
  db: Db,
  owners: { owner: string; accountId: string }[],
  now: Date,
  secretsKey: Buffer | null,
): Promise<Map<string, WebhookSecretSet>> {
  if (owners.length === 0) return new Map()
  const unique = [...new Map(owners.map((o) => [o.owner, o])).values()]
  const read = () =>
    db
      .selectFrom('webhook_secrets')
      .select(['owner', 'secret', 'previous_secret', 'previous_until'])
      .where(
        'owner',
        'in',
        unique.map((o) => o.owner),
      )
      .execute()
  // Read first: an owner has its secret from its first callback on, so the insert (and a second read) is the exception.
  let rows = await read()
  const found = new Set(rows.map((row) => row.owner))
  const missing = unique.filter((o) => !found.has(o.owner))
  if (missing.length > 0) {
    await db
      .insertInto('webhook_secrets')
      .values(
        missing.map((o) => {
          const secret = newWebhookSecret()
          return { owner: o.owner, account_id: o.accountId, secret: secretsKey ? seal(secret, secretsKey) : secret, created_at: now }
        }),
      )
      .onConflict((oc) => oc.column('owner').doNothing())
      .execute()
    rows = await read()
  }
  return new Map(
    rows.map((row) => [
      row.owner,
      {
        secret: open(row.secret, secretsKey),
        previous: row.previous_secret === null ? null : open(row.previous_secret, secretsKey),
        previousUntil: row.previous_until === null ? null : new Date(row.previous_until),
      },
    ]),
  )
}
