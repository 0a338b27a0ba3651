import { generateKeyPairSync } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createAccount, findAccount } from '../store/accounts.ts'
import { createApiKey, listApiKeys } from '../store/api-keys.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { newId, newSecret } from '../store/ids.ts'

/**
 * What `paywatch dev` keeps across restarts in its data folder (docs/operations.md, "paywatch dev"): the
 * service's callback-signing key, the dev account and its API key. The chain and the database are new on
 * each start; a receiver or a script left running keeps working with the same key and public key.
 */
export interface DevIdentity {
  /** PEM (PKCS#8) of the RSA key that signs callbacks. */
  signingKey: string
  accountId: string
  apiKeyId: string
  apiKey: string
}

const IDENTITY_FILE = 'dev-identity.json'

/** The identity kept in `dataDir`, made (and written, readable by its owner only) on the first start. */
export function loadDevIdentity(dataDir: string): DevIdentity {
  const path = join(dataDir, IDENTITY_FILE)
  try {
    const kept = JSON.parse(readFileSync(path, 'utf8')) as Partial<DevIdentity>
    if (kept.signingKey && kept.accountId && kept.apiKeyId && kept.apiKey) return kept as DevIdentity
  } catch {
    // none yet, or unreadable: a new one replaces it
  }
  const identity: DevIdentity = {
    signingKey: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    accountId: newId(),
    apiKeyId: newId(),
    apiKey: newSecret('pw'),
  }
  // Owner-only, as every embedded data folder must be (src/store/infrastructure/data-dir-permissions.ts): it holds the signing key.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  writeFileSync(path, `${JSON.stringify(identity, null, 2)}\n`, { mode: 0o600 })
  return identity
}

/** Puts the dev account and its API key into the (fresh, or shared PostgreSQL) database unless they are there. */
export async function restoreDevAccount(db: Db, identity: DevIdentity): Promise<void> {
  if (!(await findAccount(db, identity.accountId))) await createAccount(db, 'dev', identity.accountId)
  const keys = await listApiKeys(db, identity.accountId)
  if (!keys.some((key) => key.id === identity.apiKeyId))
    await createApiKey(db, identity.accountId, { id: identity.apiKeyId, key: identity.apiKey })
}
