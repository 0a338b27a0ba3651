import { parseScopes } from '../domain/app-scopes.ts'
import type { FieldError } from '../domain/field-errors.ts'
import { parseIsoTimestamp } from '../domain/iso-timestamp.ts'

/** A grant as given: the admin API's JSON body fields, or the CLI's arguments. */
export interface GrantInput {
  accountId: unknown
  scopes: unknown
  expiresAt: unknown
}

export interface GrantRequest {
  accountId: string
  scopes: string[]
  expiresAt: Date | null
}

/**
 * Reads a grant (docs/api.md §6): the granting account, known scopes, and an optional expiry that
 * must lie after `now`, the caller's clock (one rule for the admin API and the CLI). Errors come in
 * field order: account_id, scopes, expires_at.
 */
export function readGrantRequest(
  input: GrantInput,
  now: Date,
): { kind: 'ok'; request: GrantRequest } | { kind: 'invalid'; errors: FieldError[] } {
  const errors: FieldError[] = []
  const { accountId } = input
  if (typeof accountId !== 'string' || accountId === '' || accountId.length > 128)
    errors.push({ path: 'account_id', message: 'is required: the id of the granting account' })
  const scopes = parseScopes(input.scopes)
  if (!scopes.ok) errors.push({ path: 'scopes', message: scopes.message })
  let expiresAt: Date | null = null
  if (input.expiresAt !== undefined && input.expiresAt !== null) {
    const parsed = typeof input.expiresAt === 'string' ? parseIsoTimestamp(input.expiresAt) : undefined
    if (!parsed) errors.push({ path: 'expires_at', message: 'must be an ISO 8601 timestamp such as "2026-12-31T23:59:59Z"' })
    else if (parsed.getTime() <= now.getTime()) errors.push({ path: 'expires_at', message: 'must lie in the future' })
    else expiresAt = parsed
  }
  if (errors.length > 0 || !scopes.ok) return { kind: 'invalid', errors }
  return { kind: 'ok', request: { accountId: accountId as string, scopes: scopes.scopes, expiresAt } }
}
