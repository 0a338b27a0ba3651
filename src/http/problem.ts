import type { FieldError } from '../domain/field-errors.ts'

/**
 * The problem catalogue: every code the service answers (docs/api.md §6), with its status and title, in this
 * one module. Routes, hooks and the WebSocket endpoint throw by name (`problem('CONFLICT', detail)` or a
 * helper below); the OpenAPI error responses are generated from the same table (src/http/problem-schemas.ts),
 * and test/http/problem-catalogue.test.ts fails on a code thrown in src/ that is not listed here.
 * A code's `type` is derived from it (`urn:paywatch:problem:<code in kebab case>`); `title` is the reason
 * phrase of its status, as clients have always been sent.
 */
export const PROBLEMS = {
  VALIDATION_FAILED: {
    status: 400,
    title: 'Bad Request',
    description: 'a request field is invalid; `errors` lists each field with its path',
  },
  UNSUPPORTED_BLOCKCHAIN: { status: 400, title: 'Bad Request', description: 'the blockchain is not tracked by this service' },
  UNSUPPORTED_API_VERSION: { status: 400, title: 'Bad Request', description: 'x-api-version names a version this service does not speak' },
  MALFORMED_JSON: { status: 400, title: 'Bad Request', description: 'the body is empty or not valid JSON' },
  INVALID_CONTENT_LENGTH: { status: 400, title: 'Bad Request', description: 'Content-Length does not match the body' },
  BAD_URL: { status: 400, title: 'Bad Request', description: 'the URL is malformed, holds a NUL character or invalid Unicode' },
  BAD_REQUEST: { status: 400, title: 'Bad Request', description: 'the HTTP request is malformed or cannot be routed' },
  BAD_WEBSOCKET_HANDSHAKE: { status: 400, title: 'Bad Request', description: 'the WebSocket handshake headers were refused' },
  UNAUTHORIZED: {
    status: 401,
    title: 'Unauthorized',
    description: 'the API key, access token or admin token is missing, unknown or revoked',
  },
  FORBIDDEN: { status: 403, title: 'Forbidden', description: 'the access token lacks the scope' },
  CSRF_REFUSED: {
    status: 403,
    title: 'Forbidden',
    description: "a dashboard form was sent without its session's CSRF token, or from another origin",
  },
  NOT_FOUND: { status: 404, title: 'Not Found', description: "no such route or resource, or another account's" },
  REQUEST_TIMEOUT: { status: 408, title: 'Request Timeout', description: 'the request did not arrive in time' },
  CONFLICT: { status: 409, title: 'Conflict', description: 'the request contradicts the stored state' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Content Too Large', description: 'the body is larger than 64 KiB' },
  URI_TOO_LONG: { status: 414, title: 'URI Too Long', description: 'a path parameter is longer than 500 characters' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported Media Type', description: 'the body is not uncompressed JSON' },
  UPGRADE_REQUIRED: { status: 426, title: 'Upgrade Required', description: 'a WebSocket endpoint asked without Upgrade: websocket' },
  RATE_LIMITED: { status: 429, title: 'Too Many Requests', description: 'over a limit; see Retry-After and RateLimit-*' },
  HEADERS_TOO_LARGE: { status: 431, title: 'Request Header Fields Too Large', description: 'the request headers are too large' },
  INTERNAL_ERROR: { status: 500, title: 'Internal Server Error', description: 'a bug; it has been logged' },
  CHAIN_UNAVAILABLE: {
    status: 503,
    title: 'Service Unavailable',
    description: 'the blockchain RPC did not answer; retry after Retry-After',
  },
  CABLE_FULL: { status: 503, title: 'Service Unavailable', description: 'the node holds its limit of widget connections' },
} as const satisfies Record<string, { status: number; title: string; description: string }>

export type ProblemCode = keyof typeof PROBLEMS
export const PROBLEM_CODES = Object.keys(PROBLEMS) as ProblemCode[]

/**
 * An RFC 9457 problem answered as `application/problem+json`. `code` is a stable upper-case word
 * integrators can switch on; `title` and `detail` are for people. Build one with `problem()` so that its
 * code and status come from the catalogue.
 */
export class HttpProblem extends Error {
  override name = 'HttpProblem'
  readonly status: number
  readonly code: string
  readonly detail: string
  readonly errors: FieldError[] | undefined
  readonly headers: Record<string, string>
  constructor(status: number, code: string, detail: string, options: { errors?: FieldError[]; headers?: Record<string, string> } = {}) {
    super(detail)
    this.status = status
    this.code = code
    this.detail = detail
    this.errors = options.errors
    this.headers = options.headers ?? {}
  }
}

export interface ProblemOptions {
  errors?: FieldError[]
  headers?: Record<string, string>
  /** Only for a framework error passed through with its own 4xx status (BAD_REQUEST). */
  status?: number
}

/** The problem of a catalogue code, at the catalogue's status. */
export const problem = (code: ProblemCode, detail: string, options: ProblemOptions = {}): HttpProblem =>
  new HttpProblem(options.status ?? PROBLEMS[code].status, code, detail, options)

/** Reason phrases of the statuses a problem may carry outside the catalogue's (a passed-through framework 4xx). */
const statusTitles: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  426: 'Upgrade Required',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
}

/** The title of a status: the catalogue's for its own codes, the reason phrase otherwise. */
export function problemTitle(code: string, status: number): string {
  const known = Object.hasOwn(PROBLEMS, code) ? (PROBLEMS as Record<string, { status: number; title: string }>)[code] : undefined
  return known && known.status === status ? known.title : (statusTitles[status] ?? 'Error')
}

export const problemType = (code: string): string => `urn:paywatch:problem:${code.toLowerCase().replace(/_/g, '-')}`

export function problemBody(problem: HttpProblem): Record<string, unknown> {
  return {
    type: problemType(problem.code),
    title: problemTitle(problem.code, problem.status),
    status: problem.status,
    detail: problem.detail,
    code: problem.code,
    ...(problem.errors ? { errors: problem.errors } : {}),
  }
}

export const validationFailed = (errors: FieldError[]): HttpProblem =>
  problem('VALIDATION_FAILED', errors.map((e) => (e.path ? `${e.path} ${e.message}` : e.message)).join('; '), { errors })

/** 400 for a blockchain name this service does not track (docs/api.md §6): the detail says what the operator sets. */
export const unsupportedBlockchain = (blockchain: string): HttpProblem => {
  const name = blockchain.slice(0, 40)
  const envName = /^[a-z0-9_-]+$/i.test(name) ? `PAYWATCH_RPC_${name.toUpperCase().replace(/-/g, '_')}` : 'PAYWATCH_RPC_<CHAIN>'
  return problem(
    'UNSUPPORTED_BLOCKCHAIN',
    `blockchain ${JSON.stringify(name)} is not supported by this service: it has no RPC URLs (the operator sets ${envName} or "chains" in the PAYWATCH_CONFIG file)`,
    { errors: [{ path: 'blockchain', message: 'is not a tracked blockchain' }] },
  )
}

export const notFound = (what = 'resource'): HttpProblem => problem('NOT_FOUND', `${what} not found`)

/** 404 for a path no route answers. */
export const noRoute = (method: string, url: string): HttpProblem => problem('NOT_FOUND', `no route ${method} ${url.split('?')[0]}`)

/** 404 for the admin API while no admin token is configured: it does not exist until the operator sets one. */
export const noAdminApi = (method: string, url: string): HttpProblem =>
  problem(
    'NOT_FOUND',
    `no route ${method} ${url.split('?')[0]}: the admin API is off until the operator sets PAYWATCH_ADMIN_TOKEN (at least 32 characters)`,
  )

/** 503 when a chain read or check found the RPC unreachable: the client may retry (docs/api.md §6). */
export const chainUnavailable = (): HttpProblem =>
  problem('CHAIN_UNAVAILABLE', 'the blockchain RPC did not answer; try again shortly', { headers: { 'retry-after': '5' } })

/** 429 with the headers every limit of the service sends (docs/api.md §6). */
export const rateLimited = (detail: string, headers: Record<string, string>): HttpProblem => problem('RATE_LIMITED', detail, { headers })
