import type { FastifyInstance, FastifyRequest } from 'fastify'
import { HttpProblem } from './problem.ts'

/**
 * Text PostgreSQL cannot store: a NUL character (text and jsonb refuse it) or an unpaired UTF-16
 * surrogate (jsonb refuses it, text would silently store U+FFFD). Such input is refused at the edge
 * with a 400, so no route ever turns it into a database error (a 500).
 */
export const isStorableText = (value: string): boolean => !value.includes('\u0000') && value.isWellFormed()

/** The path of the first unstorable string (or object key) in a parsed JSON value, or undefined. */
export function findUnstorableText(value: unknown): string | undefined {
  // Iterative: a 64 KiB body can nest tens of thousands of levels, too deep for recursion.
  const stack: { value: unknown; path: string }[] = [{ value, path: '' }]
  while (stack.length > 0) {
    const { value: current, path } = stack.pop()!
    if (typeof current === 'string') {
      if (!isStorableText(current)) return path
    } else if (Array.isArray(current)) {
      for (let i = 0; i < current.length; i++) stack.push({ value: current[i], path: join(path, String(i)) })
    } else if (typeof current === 'object' && current !== null) {
      for (const [key, child] of Object.entries(current)) {
        if (!isStorableText(key)) return join(path, key.replace(/[\u0000\uD800-\uDFFF]/g, '?'))
        stack.push({ value: child, path: join(path, key) })
      }
    }
  }
  return undefined
}

const join = (path: string, key: string): string => (path ? `${path}.${key}` : key)

const unstorable = (path: string): HttpProblem =>
  new HttpProblem(400, 'VALIDATION_FAILED', `${path || 'the body'} contains a NUL character or invalid Unicode`, {
    errors: [{ path, message: 'must not contain NUL characters or unpaired surrogates' }],
  })

/**
 * JSON bodies: an empty body counts as no body (clients send `Content-Type: application/json` on
 * every request, DELETE included), prototype-polluting keys are refused (Fastify's secure parser),
 * and strings must be storable.
 */
export function installJsonBodyParser(app: FastifyInstance, bodyLimit: number): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit }, (request, body, done) => {
    const text = body as string
    if (text.trim() === '') return done(null, undefined)
    parseJson(request, text, (error: Error | null, parsed?: unknown) => {
      if (error) return done(error, undefined)
      const bad = findUnstorableText(parsed)
      if (bad !== undefined) return done(unstorable(bad), undefined)
      done(null, parsed)
    })
  })
}

/** Path parameters and query values are checked the same way before any route sees them. */
export function installUrlGuard(app: FastifyInstance): void {
  app.addHook('onRequest', async (request: FastifyRequest) => {
    for (const source of [request.params, request.query]) {
      if (typeof source !== 'object' || source === null) continue
      for (const value of Object.values(source as Record<string, unknown>)) {
        const values = Array.isArray(value) ? value : [value]
        if (values.some((v) => typeof v === 'string' && !isStorableText(v))) {
          throw new HttpProblem(400, 'BAD_URL', 'the URL contains a NUL character or invalid Unicode')
        }
      }
    }
  })
}
