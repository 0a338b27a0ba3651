/**
 * The endpoint of a callback URL (docs/api.md §8): `scheme://host[:port]`, as URL.origin writes it
 * (lower case, no user info, no default port). Null for anything that is not an absolute http(s) URL.
 * The store keeps it with each tracking (`callback_origin`, written at create, migration 0038); its SQL
 * twin `paywatch_origin()` (migrations 0015, 0035) computed it for the trackings stored before.
 */
export function endpointUrlOf(url: string | null): string | null {
  if (!url) return null
  try {
    const parsed = new URL(url)
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.origin : null
  } catch {
    return null
  }
}
