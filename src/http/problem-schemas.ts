import { Type, type TSchema } from '@sinclair/typebox'
import type { RouteOptions } from 'fastify'
import { PROBLEM_CODES, PROBLEMS, type ProblemCode } from './problem.ts'

/**
 * The OpenAPI error responses, generated from the problem catalogue (src/http/problem.ts): one problem schema
 * whose `code` lists the codes a response can carry, each with its meaning in the response's description.
 * Property order is the order of problemBody(): Fastify serializes problems with these schemas.
 */

const Str = (description?: string) => Type.String(description ? { description } : {})

function problemObject(codes: readonly ProblemCode[], description: string): TSchema {
  return Type.Object(
    {
      type: Str(),
      title: Str(),
      status: Type.Integer(),
      detail: Str(),
      code: Type.String({ enum: [...codes], description: 'stable upper-case error code' }),
      errors: Type.Optional(Type.Array(Type.Object({ path: Str(), message: Str() }))),
    },
    { description },
  )
}

const describe = (codes: readonly ProblemCode[]): string =>
  `RFC 9457 problem (application/problem+json): ${codes.map((code) => `${code} (${PROBLEMS[code].description})`).join('; ')}`

/** Any 4xx problem of the catalogue (docs/api.md §6): for the routes that document `'4xx'` without listing codes. */
export const problemSchema = problemObject(
  PROBLEM_CODES.filter((code) => PROBLEMS[code].status < 500),
  'RFC 9457 problem (application/problem+json)',
)

/** One entry per status of these codes, each listing its codes. */
function byStatus(codes: readonly ProblemCode[]): Record<number, TSchema> {
  const lists = new Map<number, ProblemCode[]>()
  for (const code of new Set(codes)) {
    const { status } = PROBLEMS[code]
    lists.set(status, [...(lists.get(status) ?? []), code])
  }
  return Object.fromEntries([...lists].map(([status, list]) => [status, problemObject(list, describe(list))]))
}

/** The route's `response` entries for the codes it answers, and `4xx` for any other client problem. */
export function problemResponses(...codes: ProblemCode[]): Record<number | '4xx', TSchema> {
  return { ...byStatus(codes), '4xx': problemSchema }
}

/** Problems any route may answer; a body adds the body's (docs/api.md §6). */
export const EVERY_ROUTE_PROBLEMS: ProblemCode[] = ['BAD_URL', 'INTERNAL_ERROR']
export const BODY_PROBLEMS: ProblemCode[] = [
  'MALFORMED_JSON',
  'INVALID_CONTENT_LENGTH',
  'VALIDATION_FAILED',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
]
/** The API key hooks (src/http/app.ts): authentication, x-api-version and the per-key limits. */
export const API_KEY_PROBLEMS: ProblemCode[] = ['UNAUTHORIZED', 'UNSUPPORTED_API_VERSION', 'RATE_LIMITED']
/** The admin guard (src/http/routes/admin.ts): a wrong token, or no admin API without one; the failed-authentication throttle. */
export const ADMIN_PROBLEMS: ProblemCode[] = ['UNAUTHORIZED', 'NOT_FOUND', 'RATE_LIMITED']

const codesOf = (schema: unknown): ProblemCode[] | undefined =>
  (schema as { properties?: { code?: { enum?: ProblemCode[] } } } | undefined)?.properties?.code?.enum

/**
 * Adds the problems a hook answers to a route's documented responses (an `onRoute` hook): codes of a status
 * the route lists already are merged into its entry. The route's schema objects are shared, so never changed.
 */
export function documentProblems(route: RouteOptions, codes: readonly ProblemCode[]): void {
  const schema = (route.schema ?? {}) as { response?: Record<string, unknown> }
  const response: Record<string, unknown> = { ...schema.response }
  for (const [status, added] of Object.entries(byStatus(codes))) {
    const listed = codesOf(response[status])
    // A status documented with another body (not a problem) is left as the route says.
    if (response[status] !== undefined && !listed) continue
    response[status] = listed ? byStatus([...listed, ...codesOf(added)!])[Number(status)] : added
  }
  route.schema = { ...schema, response }
}
