/**
 * The endpoint of a callback URL (docs/api.md §8): `scheme://host[:port]`, as URL.origin writes it
 * (lower case, no user info, no default port). Null for anything that is not an absolute http(s) URL.
 * The store's `paywatch_origin()` (migrations 0015, 0035) computes the same in SQL.
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
