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

/** Reads the `scopes` of a grant: a non-empty list of accepted scope names, kept as given, without repeats. */
export function parseScopes(list: unknown): { ok: true; scopes: string[] } | { ok: false; message: string } {
  if (!Array.isArray(list) || list.length === 0 || list.some((s) => typeof s !== 'string')) {
    return { ok: false, message: `must be a non-empty list of scopes: ${ACCEPTED_SCOPE_NAMES.join(', ')}` }
  }
  const unknown = (list as string[]).filter((s) => !canonical(s))
  if (unknown.length > 0) {
    return { ok: false, message: `unknown scope ${unknown.map((s) => JSON.stringify(s.slice(0, 60))).join(', ')}; accepted: ${ACCEPTED_SCOPE_NAMES.join(', ')}` }
  }
  return { ok: true, scopes: [...new Set(list as string[])] }
}

/** Whether granted scope names (synonyms included) cover the needed scope. */
export function grantsScope(granted: readonly string[], needed: AppScope): boolean {
  return granted.some((name) => canonical(name) === needed)
}
