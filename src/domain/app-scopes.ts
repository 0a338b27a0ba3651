import { readFields, type RequestField } from './request-fields.ts'

/** Scopes an account grants an app (docs/api.md §2). */
export const APP_SCOPES = ['payments.shopify.read', 'checkouts.shopify.read'] as const
export type AppScope = (typeof APP_SCOPES)[number]

/**
 * Other names accepted for a scope (the interface also names `payments.read`). A Map, not an object
 * literal: a lookup must not find inherited names such as `constructor` or `__proto__`.
 */
const SYNONYMS = new Map<string, AppScope>([['payments.read', 'payments.shopify.read']])

export const ACCEPTED_SCOPE_NAMES: readonly string[] = [...APP_SCOPES, ...SYNONYMS.keys()]

const canonical = (name: string): AppScope | undefined =>
  (APP_SCOPES as readonly string[]).includes(name) ? (name as AppScope) : SYNONYMS.get(name)

/** The `scopes` of a grant: a non-empty list of accepted scope names, kept as given, without repeats. */
export const scopesField = { kind: 'list', values: ACCEPTED_SCOPE_NAMES, item: 'scope', required: true } as const satisfies RequestField

/** Reads a list of scopes on its own, by the grant body's rule (`scopesField`). */
export function parseScopes(list: unknown): { ok: true; scopes: string[] } | { ok: false; message: string } {
  const read = readFields({ scopes: list }, { scopes: scopesField }, (reader) => reader.list('scopes') ?? [])
  return read.ok ? { ok: true, scopes: read.value } : { ok: false, message: read.errors[0]!.message }
}

/** Whether granted scope names (synonyms included) cover the needed scope. */
export function grantsScope(granted: readonly string[], needed: AppScope): boolean {
  return granted.some((name) => canonical(name) === needed)
}
