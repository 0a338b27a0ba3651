import type { FastifyReply, FastifyRequest } from 'fastify'
import { isStorableText } from '../domain/storable-text.ts'
import { html } from './html.ts'
import { page, sendPage } from './layout.ts'

/** Form fields that are lists (a group of checkboxes); every other field, and every query value, is one value. */
const LIST_FIELDS = new Set(['scope'])
/** No dashboard value needs more: a search, an id, a URL, a name (200), a time. */
const MAX_VALUE_LENGTH = 2_000

/**
 * What is wrong with a dashboard request's inputs (path, query, form), or undefined. Every value is one
 * string (a repeated query parameter or form field is refused, lists excepted), text PostgreSQL can
 * store (src/domain/storable-text.ts: no NUL, no lone surrogate, as the JSON API checks) and of a
 * bounded length. The field rules themselves (names, URLs, times) are the admin use cases', the same
 * as the JSON API's.
 */
export function inputProblem(request: FastifyRequest): string | undefined {
  const parts: [string, unknown][] = [
    ['path', request.params],
    ['query', request.query],
    ['form', request.body],
  ]
  for (const [where, fields] of parts) {
    if (fields === undefined || fields === null) continue
    if (typeof fields !== 'object') return `the ${where} is not a set of fields`
    for (const [name, value] of Object.entries(fields)) {
      const values = Array.isArray(value) ? value : [value]
      if (values.length > 1 && !(where === 'form' && LIST_FIELDS.has(name))) return `a ${where} field is given more than once`
      for (const one of values) {
        if (typeof one !== 'string') return `a ${where} field is not text`
        if (!isStorableText(one)) return `a ${where} field holds a character that cannot be stored (NUL or a lone surrogate)`
        if (one.length > MAX_VALUE_LENGTH) return `a ${where} field is longer than ${MAX_VALUE_LENGTH} characters`
      }
    }
  }
  return undefined
}

/**
 * The dashboard's input check, before any session or database work: 400 with a page that says what
 * kind of value was refused (never the value itself, nor its name: a link could put any text there).
 */
export async function checkDashboardInput(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const problem = inputProblem(request)
  if (!problem) return
  await sendPage(reply, page({ title: 'Bad request' }, html`<p role="alert">This request was not accepted: ${problem}.</p>`), 400)
}
