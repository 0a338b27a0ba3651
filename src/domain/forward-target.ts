import { isStorableText } from './storable-text.ts'

export const MAX_FORWARD_TO_LENGTH = 2048

/**
 * Why a `forward_to` value may not be stored, or null when it may. The widget sends the user's browser
 * there, so the value must lead to an http(s) page of the integrator's choosing: an absolute http(s)
 * URL or, where `paths` is allowed (a callback answer), a path on the page's own site. Refused: other
 * schemes (`javascript:`, `data:`), and everything a browser would read as another site although it looks
 * like a path: `//host`, `/\host` (a browser reads `\` as `/`), and control characters or surrounding
 * spaces (a browser drops tabs and line breaks, so `/<tab>/host` becomes `//host`).
 */
export function forwardTargetProblem(value: unknown, options: { paths: boolean }): string | null {
  const expected = options.paths ? 'an http(s) URL or a path starting with a single /' : 'an absolute http(s) URL'
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_FORWARD_TO_LENGTH) {
    return `must be ${expected} of at most ${MAX_FORWARD_TO_LENGTH} characters`
  }
  // eslint-disable-next-line no-control-regex
  if (!isStorableText(value) || /[\u0000-\u001f\u007f]/.test(value) || value.trim() !== value) {
    return 'must not hold control characters or surrounding spaces'
  }
  if (value.startsWith('/') || value.startsWith('\\')) {
    if (!options.paths) return `must be ${expected}`
    if (/^.[/\\]/.test(value) || value.startsWith('\\'))
      return 'a path must start with a single / (//host and /\\host lead to another site)'
    return null
  }
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return `must be ${expected}`
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must use http or https'
  // `http:host` and `https:/host` parse here but a browser may read them relative to the current page.
  if (!/^https?:\/\/[^/\\]/i.test(value) || url.hostname === '') return `must be ${expected}`
  return null
}
