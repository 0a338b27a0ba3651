import type { FastifyInstance, FastifyRequest } from 'fastify'
import { isStorableText } from '../domain/storable-text.ts'
import { problem, type HttpProblem } from './problem.ts'

/** Deeper JSON is refused: no request needs it, and recursive code (JSON.stringify, jsonb) must not overflow. */
export const MAX_JSON_DEPTH = 64

/** The first problem of a parsed JSON body (unstorable text, too deep nesting) with its path, or undefined. */
export function findUnacceptableJson(value: unknown): { path: string; message: string } | undefined {
  // Iterative: a 64 KiB body can nest tens of thousands of levels, too deep for recursion.
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: '', depth: 0 }]
  while (stack.length > 0) {
    const { value: current, path, depth } = stack.pop()!
    if (typeof current === 'string') {
      if (!isStorableText(current)) return { path, message: 'must not contain NUL characters or unpaired surrogates' }
    } else if (typeof current === 'object' && current !== null) {
      if (depth >= MAX_JSON_DEPTH) return { path, message: `must not nest deeper than ${MAX_JSON_DEPTH} levels` }
      if (Array.isArray(current)) {
        for (let i = 0; i < current.length; i++) stack.push({ value: current[i], path: join(path, String(i)), depth: depth + 1 })
      } else {
        for (const [key, child] of Object.entries(current)) {
          if (!isStorableText(key)) {
            return {
              path: join(path, key.replace(/[\u0000\uD800-\uDFFF]/g, '?')),
              message: 'keys must not contain NUL characters or unpaired surrogates',
            }
          }
          stack.push({ value: child, path: join(path, key), depth: depth + 1 })
        }
      }
    }
  }
  return undefined
}

const join = (path: string, key: string): string => (path ? `${path}.${key}` : key)

const unacceptable = (found: { path: string; message: string }): HttpProblem =>
  problem('VALIDATION_FAILED', `${found.path || 'the body'} ${found.message}`, { errors: [found] })

/**
 * JSON bodies: an empty body counts as no body (clients send `Content-Type: application/json` on
 * every request, DELETE included), prototype-polluting keys are refused (Fastify's secure parser),
 * strings must be storable and nesting shallow.
 */
export function installJsonBodyParser(app: FastifyInstance, bodyLimit: number): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit }, (request, body, done) => {
    // Compressed bodies are not decoded: say so (RFC 9110 15.5.16) instead of calling the bytes malformed JSON.
    const encoding = request.headers['content-encoding']?.trim().toLowerCase()
    if (encoding && encoding !== 'identity') {
      return done(
        problem('UNSUPPORTED_MEDIA_TYPE', `Content-Encoding ${JSON.stringify(encoding)} is not accepted; send the JSON uncompressed`),
        undefined,
      )
    }
    const text = body as string
    if (text.trim() === '') return done(null, undefined)
    parseJson(request, text, (error: Error | null, parsed?: unknown) => {
      if (error) return done(error, undefined)
      const found = findUnacceptableJson(parsed)
      if (found) return done(unacceptable(found), undefined)
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
          throw problem('BAD_URL', 'the URL contains a NUL character or invalid Unicode')
        }
      }
    }
  })
}
