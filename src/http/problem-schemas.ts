import { Type, type TSchema } from '@sinclair/typebox'
import type { RouteOptions } from 'fastify'
import { PROBLEMS, type ProblemCode } from './problem.ts'

/**
 * The OpenAPI error responses, generated from the problem catalogue (src/http/problem.ts): the problem body
 * is described once, as the `Problem` component; each error response refers to it, narrows `code` to the
 * codes it can carry and names each with its meaning in its description. Problems are sent as serialized
 * JSON (src/http/error-handler.ts): these schemas document, they do not serialize.
 */

const Str = (description?: string) => Type.String(description ? { description } : {})

/** A reference to a component of /openapi.json (src/http/openapi-components.ts). */
export const componentRef = (id: string): TSchema => Type.Unsafe({ $ref: `${id}#` })

export const problemComponent = Type.Object(
  {
    type: Str('urn:paywatch:problem:<code in kebab case>'),
    title: Str("the reason phrase of the answer's status"),
    status: Type.Integer(),
    detail: Str('what went wrong, for people'),
    code: Type.String({ description: 'stable upper-case error code' }),
    errors: Type.Optional(
      Type.Array(Type.Object({ path: Str('the field, dotted'), message: Str() }), {
        description: "with VALIDATION_FAILED: each field's problem",
      }),
    ),
  },
  {
    $id: 'Problem',
    description: 'RFC 9457 problem (application/problem+json)',
    examples: [
      {
        type: 'urn:paywatch:problem:validation-failed',
        title: 'Bad Request',
        status: 400,
        detail: 'amount must be a decimal string such as "1.5"',
        code: 'VALIDATION_FAILED',
        errors: [{ path: 'amount', message: 'must be a decimal string such as "1.5"' }],
      },
    ],
  },
)

/** A route's error response: the Problem component, `code` narrowed to `codes` when given. */
function problemResponse(codes: readonly ProblemCode[] | null, description: string): TSchema {
  const schema = codes ? { allOf: [componentRef('Problem')], properties: { code: { enum: [...codes] } } } : componentRef('Problem')
  return Type.Unsafe({ description, content: { 'application/problem+json': { schema } } })
}

const describe = (codes: readonly ProblemCode[]): string => codes.map((code) => `${code}: ${PROBLEMS[code].description}`).join('; ')

/** Any 4xx problem of the catalogue (docs/api.md §6): for the routes that document `'4xx'` without listing codes. */
export const problemSchema = problemResponse(null, 'RFC 9457 problem (application/problem+json): any other client problem')

/** One entry per status of these codes, each listing its codes. */
function byStatus(codes: readonly ProblemCode[]): Record<number, TSchema> {
  const lists = new Map<number, ProblemCode[]>()
  for (const code of new Set(codes)) {
    const { status } = PROBLEMS[code]
    lists.set(status, [...(lists.get(status) ?? []), code])
  }
  return Object.fromEntries([...lists].map(([status, list]) => [status, problemResponse(list, describe(list))]))
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

type ProblemResponse = { content?: Record<string, { schema?: { properties?: { code?: { enum?: ProblemCode[] } } } }> }
const codesOf = (response: unknown): ProblemCode[] | undefined =>
  (response as ProblemResponse | undefined)?.content?.['application/problem+json']?.schema?.properties?.code?.enum

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
