import { timingSafeEqual } from 'node:crypto'
import type { Db } from './infrastructure/database.ts'
import { hashSecret, newId, newSecret } from './ids.ts'

export interface AppGrant {
  id: string
  appId: string
  /** The granting account: whose data the app reads with this grant's token. */
  accountId: string
  scopes: string[]
  createdAt: Date
  expiresAt: Date | null
  revokedAt: Date | null
}

type GrantRow = {
  id: string
  app_id: string
  account_id: string
  scopes: string[]
  created_at: Date
  expires_at: Date | null
  revoked_at: Date | null
}
const toGrant = (row: GrantRow): AppGrant => ({
  id: row.id,
  appId: row.app_id,
  accountId: row.account_id,
  scopes: row.scopes,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at,
})
const grantColumns = ['id', 'app_id', 'account_id', 'scopes', 'created_at', 'expires_at', 'revoked_at'] as const

/** Grants an app scopes on an account; the access token is returned here once and stored only hashed. */
export async function createGrant(
  db: Db,
  grant: { appId: string; accountId: string; scopes: string[]; expiresAt: Date | null },
): Promise<{ grant: AppGrant; accessToken: string }> {
  const accessToken = newSecret('pwt')
  const row = await db
    .insertInto('app_grants')
    .values({
      id: newId(),
      app_id: grant.appId,
      account_id: grant.accountId,
      scopes: grant.scopes,
      token_hash: hashSecret(accessToken),
      expires_at: grant.expiresAt,
    })
    .returning(grantColumns)
    .executeTakeFirstOrThrow()
  return { grant: toGrant(row), accessToken }
}

export async function listGrants(db: Db, appId: string): Promise<AppGrant[]> {
  const rows = await db
    .selectFrom('app_grants')
    .select(grantColumns)
    .where('app_id', '=', appId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  return rows.map(toGrant)
}

/** Revokes a grant (its token stops working at once); false when unknown. Revoking twice keeps the first time. */
export async function revokeGrant(db: Db, id: string, at: Date): Promise<boolean> {
  const found = await db.selectFrom('app_grants').select('id').where('id', '=', id).executeTakeFirst()
  if (!found) return false
  await db.updateTable('app_grants').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).execute()
  return true
}

/**
 * The grant behind an access token, with the account owning its app, when the token is known, not
 * revoked and not expired at `now`; the stored hash is compared in constant time.
 */
export async function authenticateAccessToken(
  db: Db,
  token: string,
  now: Date,
): Promise<{ grant: AppGrant; appOwnerId: string } | undefined> {
  const hash = hashSecret(token)
  const row = await db
    .selectFrom('app_grants')
    .innerJoin('apps', 'apps.id', 'app_grants.app_id')
    .select([
      'app_grants.id',
      'app_grants.app_id',
      'app_grants.account_id',
      'app_grants.scopes',
      'app_grants.created_at',
      'app_grants.expires_at',
      'app_grants.revoked_at',
      'app_grants.token_hash',
      'apps.account_id as app_owner_id',
    ])
    .where('app_grants.token_hash', '=', hash)
    .executeTakeFirst()
  if (!row || !timingSafeEqual(Buffer.from(row.token_hash), hash)) return undefined
  if (row.revoked_at !== null) return undefined
  if (row.expires_at !== null && new Date(row.expires_at).getTime() <= now.getTime()) return undefined
  return { grant: toGrant(row), appOwnerId: row.app_owner_id }
}
