/**
 * A provider's URL as logs, metrics and /readyz show it: scheme, host and port only. Providers put
 * API keys in the path or the query (`https://eth.example/v2/<key>`), so anything after the host is
 * masked, never shown.
 */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url)
    const hidden = (parsed.pathname !== '/' && parsed.pathname !== '') || parsed.search !== '' || parsed.username !== ''
    return `${parsed.protocol}//${parsed.host}${hidden ? '/***' : ''}`
  } catch {
    return 'invalid-url'
  }
}
