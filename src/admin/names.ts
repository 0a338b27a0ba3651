import { readFields, type FieldTable, type ParseResult } from '../domain/request-fields.ts'

export const MAX_NAME_LENGTH = 200

/**
 * The admin bodies that hold only a name (docs/api.md §6), each one field table that both its reader and
 * its OpenAPI schema use (src/domain/request-fields.ts says why). A required name (account, app) is a
 * string of 1 to 200 characters, stored trimmed; an optional one (link, integration) is absent or a
 * string of at most 200 characters, blank being none.
 */
const requiredName = (description: string) =>
  ({
    kind: 'name',
    max: MAX_NAME_LENGTH,
    required: true,
    description,
    problem: `is required: a string of 1 to ${MAX_NAME_LENGTH} characters`,
  }) as const

const optionalName = { kind: 'name', max: MAX_NAME_LENGTH, description: `for operators, up to ${MAX_NAME_LENGTH} characters` } as const

/** POST /admin/accounts */
export const accountRequestFields = {
  name: requiredName(`the account's name, 1 to ${MAX_NAME_LENGTH} characters`),
} as const satisfies FieldTable
/** POST /admin/accounts/{id}/apps */
export const appRequestFields = { name: requiredName(`the app's name, 1 to ${MAX_NAME_LENGTH} characters`) } as const satisfies FieldTable
/** POST /admin/accounts/{id}/links */
export const linkRequestFields = { name: optionalName } as const satisfies FieldTable
/** POST /admin/accounts/{id}/integrations */
export const integrationRequestFields = {
  name: optionalName,
  reversal_events: {
    kind: 'boolean',
    description: 'send payment.reverted and payment.reconfirmed callbacks for its trackings (default false)',
  },
} as const satisfies FieldTable

type RequiredNameFields = typeof accountRequestFields | typeof appRequestFields
type OptionalNameFields = typeof linkRequestFields

/** Reads a body of a required name (`paywatch apps create` reads its name argument with it too). */
export function readRequiredName(body: Record<string, unknown>, fields: RequiredNameFields): ParseResult<{ name: string }> {
  return readFields(body, fields, (read) => ({ name: read.name('name') ?? '' }))
}

export function readOptionalName(body: Record<string, unknown>, fields: OptionalNameFields): ParseResult<{ name: string | null }> {
  return readFields(body, fields, (read) => ({ name: read.name('name') }))
}

/** The integration body: an optional name and the reversal events opt-in. */
export function readIntegrationRequest(body: Record<string, unknown>): ParseResult<{ name: string | null; reversalEvents: boolean }> {
  return readFields(body, integrationRequestFields, (read) => ({
    name: read.name('name'),
    reversalEvents: read.boolean('reversal_events') ?? false,
  }))
}
