import type { FieldError } from '../domain/field-errors.ts'

export const MAX_NAME_LENGTH = 200

/** A required name (account, app): a string of 1 to 200 characters, stored trimmed. */
export function readRequiredName(value: unknown, path = 'name'): { name: string } | { error: FieldError } {
  if (typeof value !== 'string' || value.trim() === '' || value.length > MAX_NAME_LENGTH) {
    return { error: { path, message: `is required: a string of 1 to ${MAX_NAME_LENGTH} characters` } }
  }
  return { name: value.trim() }
}

/** An optional name for operators (link, integration): absent, or a string of at most 200 characters; blank is none. */
export function readOptionalName(value: unknown, path = 'name'): { name: string | null } | { error: FieldError } {
  if (value === undefined || value === null) return { name: null }
  if (typeof value !== 'string' || value.length > MAX_NAME_LENGTH) {
    return { error: { path, message: `must be a string of at most ${MAX_NAME_LENGTH} characters` } }
  }
  return { name: value.trim() || null }
}
