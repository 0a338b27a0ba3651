import * as accounts from '../store/accounts.ts'
import type { Account } from '../store/accounts.ts'
import * as apiKeys from '../store/api-keys.ts'
import type { ApiKeyInfo } from '../store/api-keys.ts'
import { missingAccount, notFound, type AdminDeps, type NotFound } from './admin-deps.ts'

/**
 * Accounts and their API keys (docs/api.md §6). The name is taken as given: the admin API reads it
 * with `readRequiredName` (trimmed, 1 to 200 characters), the CLI passes its argument verbatim.
 */
export async function createAccount(deps: AdminDeps, name: string): Promise<{ kind: 'created'; account: Account }> {
  return { kind: 'created', account: await accounts.createAccount(deps.db, name) }
}

export async function listAccounts(deps: AdminDeps): Promise<Account[]> {
  return accounts.listAccounts(deps.db)
}

/** A new API key of the account; the clear key is in this answer only. */
export async function createApiKey(
  deps: AdminDeps,
  accountId: string,
): Promise<{ kind: 'created'; key: { id: string; key: string } } | NotFound<'account'>> {
  const missing = await missingAccount(deps.db, accountId)
  if (missing) return missing
  return { kind: 'created', key: await apiKeys.createApiKey(deps.db, accountId) }
}

export async function listApiKeys(
  deps: AdminDeps,
  accountId: string,
): Promise<{ kind: 'listed'; keys: ApiKeyInfo[] } | NotFound<'account'>> {
  const missing = await missingAccount(deps.db, accountId)
  if (missing) return missing
  return { kind: 'listed', keys: await apiKeys.listApiKeys(deps.db, accountId) }
}

/** Revoked as of the clock's now (revoking twice keeps the first time); an unknown key is a not-found. */
export async function revokeApiKey(deps: AdminDeps, keyId: string): Promise<{ kind: 'revoked' } | NotFound<'API key'>> {
  return (await apiKeys.revokeApiKey(deps.db, keyId, deps.clock())) ? { kind: 'revoked' } : notFound('API key')
}
