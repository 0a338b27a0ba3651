/**
 * HTML built from template literals: every interpolated value is escaped unless it is already `Html`
 * (the output of `html` itself, or `raw` for markup the code wrote). Arrays are joined. So a value
 * from the database (a name, a payload, an error text) can never become markup.
 */
export class Html {
  readonly text: string
  constructor(text: string) {
    this.text = text
  }
  toString(): string {
    return this.text
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => ESCAPES[c]!)

type Part = Html | string | number | bigint | boolean | null | undefined | readonly Part[]

const render = (part: Part): string => {
  if (part === null || part === undefined || part === false) return ''
  if (part instanceof Html) return part.text
  if (Array.isArray(part)) return part.map(render).join('')
  return escapeHtml(String(part))
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0]!
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!
  return new Html(out)
}

/** Markup the code wrote itself (never a value from outside). */
export const raw = (text: string): Html => new Html(text)

/** A query string from the non-empty values, for links that keep the current filters. */
export function queryString(values: Record<string, string | undefined>): string {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(values)) if (value) params.set(key, value)
  const text = params.toString()
  return text ? `?${text}` : ''
}
