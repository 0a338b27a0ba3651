import type { FieldError } from '../domain/field-errors.ts'
import * as grants from '../store/app-grants.ts'
import type { AppGrant } from '../store/app-grants.ts'
import * as apps from '../store/apps.ts'
import type { App } from '../store/apps.ts'
import { missingAccount, notFound, type AdminDeps, type NotFound } from './admin-deps.ts'
import { readGrantRequest, type GrantInput } from './grant-request.ts'
import { appRequestFields, readRequiredName } from './names.ts'

type Invalid = { kind: 'invalid'; errors: FieldError[] }

/** Apps owned by developer accounts (docs/api.md §2 and §6): the name is read first, then the owner must exist. */
export async function createApp(
  deps: AdminDeps,
  ownerAccountId: string,
  name: unknown,
): Promise<{ kind: 'created'; app: App } | Invalid | NotFound<'account'>> {
  const read = readRequiredName({ name }, appRequestFields)
  if (!read.ok) return { kind: 'invalid', errors: read.errors }
  const missing = await missingAccount(deps.db, ownerAccountId)
  if (missing) return missing
  return { kind: 'created', app: await apps.createApp(deps.db, ownerAccountId, read.value.name) }
}

export async function listApps(deps: AdminDeps, ownerAccountId: string): Promise<{ kind: 'listed'; apps: App[] } | NotFound<'account'>> {
  const missing = await missingAccount(deps.db, ownerAccountId)
  if (missing) return missing
  return { kind: 'listed', apps: await apps.listApps(deps.db, ownerAccountId) }
}

/** Deletes the app with all its grants: their tokens stop working. */
export async function deleteApp(deps: AdminDeps, appId: string): Promise<{ kind: 'deleted' } | NotFound<'app'>> {
  return (await apps.deleteApp(deps.db, appId)) ? { kind: 'deleted' } : notFound('app')
}

/**
 * An account grants the app scopes: the request is read first (every field problem at once, expiry
 * judged by the clock), then the app and the granting account must exist. The access token is in
 * this answer only.
 */
export async function grantApp(
  deps: AdminDeps,
  appId: string,
  input: GrantInput,
): Promise<{ kind: 'created'; grant: AppGrant; accessToken: string } | Invalid | NotFound<'app' | 'account'>> {
  const read = readGrantRequest(input, deps.clock())
  if (read.kind === 'invalid') return read
  if (!(await apps.findApp(deps.db, appId))) return notFound('app')
  const missing = await missingAccount(deps.db, read.request.accountId)
  if (missing) return missing
  const created = await grants.createGrant(deps.db, { appId, ...read.request })
  return { kind: 'created', grant: created.grant, accessToken: created.accessToken }
}

export async function listAppGrants(deps: AdminDeps, appId: string): Promise<{ kind: 'listed'; grants: AppGrant[] } | NotFound<'app'>> {
  if (!(await apps.findApp(deps.db, appId))) return notFound('app')
  return { kind: 'listed', grants: await grants.listGrants(deps.db, appId) }
}

/** Revoked as of the clock's now: the access token stops working at once. */
export async function revokeGrant(deps: AdminDeps, grantId: string): Promise<{ kind: 'revoked' } | NotFound<'grant'>> {
  return (await grants.revokeGrant(deps.db, grantId, deps.clock())) ? { kind: 'revoked' } : notFound('grant')
}
