const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/

/**
 * A connected shop is a host name (docs/api.md, records and endpoints), e.g. `example.myshopify.com`: stored lower-case,
 * without a trailing dot. Returns the host name, or undefined when the text is not one (a URL, a
 * path, spaces …).
 */
export function normalizeShopHost(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  const host = value.trim().toLowerCase().replace(/\.$/, '')
  if (host.length === 0 || host.length > 253) return undefined
  return host.split('.').every((part) => label.test(part)) ? host : undefined
}

export const SHOP_HOST_HINT = 'a host name such as "example.myshopify.com" (no scheme, no path)'
