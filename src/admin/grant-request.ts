import { scopesField } from '../domain/app-scopes.ts'
import type { FieldError } from '../domain/field-errors.ts'
import { readFields, type FieldTable, type ParseResult } from '../domain/request-fields.ts'

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
 * The POST /admin/apps/{id}/grants body: what readGrantBody reads and the OpenAPI schema documents
 * (src/domain/request-fields.ts says why one table drives both). The messages are the ones this body
 * has always answered.
 */
export const grantRequestFields = {
  account_id: {
    kind: 'text',
    pattern: /^.{1,128}$/s,
    hint: 'an account id',
    required: true,
    problem: 'is required: the id of the granting account',
    description: 'the granting account, whose data the app will read',
    example: 'acc_01HZX3Q4V5W6Y7Z8A9B0C1D2E3',
  },
  scopes: { ...scopesField, description: 'what the app may read' },
  expires_at: {
    kind: 'timestamp',
    problem: 'must be an ISO 8601 timestamp such as "2026-12-31T23:59:59Z"',
    description: 'ISO 8601; the token stops working then',
  },
} as const satisfies FieldTable

/**
 * Reads a grant body (docs/api.md §6): the granting account, known scopes, and an optional expiry that
 * must lie after `now`, the caller's clock (one rule for the admin API and the CLI). Errors come in
 * field order: account_id, scopes, expires_at.
 */
export function readGrantBody(body: Record<string, unknown>, now: Date): ParseResult<GrantRequest> {
  return readFields(body, grantRequestFields, (read, errors) => {
    const accountId = read.text('account_id') ?? ''
    const scopes = read.list('scopes') ?? []
    let expiresAt = read.timestamp('expires_at')
    if (expiresAt && expiresAt.getTime() <= now.getTime()) {
      errors.add('expires_at', 'must lie in the future')
      expiresAt = null
    }
    return { accountId, scopes, expiresAt }
  })
}

/** The same reading of a grant given field by field (the admin route's body, the CLI's arguments). */
export function readGrantRequest(
  input: GrantInput,
  now: Date,
): { kind: 'ok'; request: GrantRequest } | { kind: 'invalid'; errors: FieldError[] } {
  const read = readGrantBody({ account_id: input.accountId, scopes: input.scopes, expires_at: input.expiresAt }, now)
  return read.ok ? { kind: 'ok', request: read.value } : { kind: 'invalid', errors: read.errors }
}
