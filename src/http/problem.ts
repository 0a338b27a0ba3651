import type { FieldError } from '../domain/field-errors.ts'

/**
 * An RFC 9457 problem answered as `application/problem+json`. `code` is a stable upper-case word
 * integrators can switch on; `title` and `detail` are for people.
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

const titles: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  406: 'Not Acceptable', 408: 'Request Timeout', 409: 'Conflict', 413: 'Content Too Large', 414: 'URI Too Long', 415: 'Unsupported Media Type',
  426: 'Upgrade Required', 429: 'Too Many Requests', 431: 'Request Header Fields Too Large', 500: 'Internal Server Error', 503: 'Service Unavailable',
}

export function problemBody(problem: HttpProblem): Record<string, unknown> {
  return {
    type: `urn:paywatch:problem:${problem.code.toLowerCase().replace(/_/g, '-')}`,
    title: titles[problem.status] ?? 'Error',
    status: problem.status,
    detail: problem.detail,
    code: problem.code,
    ...(problem.errors ? { errors: problem.errors } : {}),
  }
}

export const validationFailed = (errors: FieldError[]): HttpProblem =>
  new HttpProblem(400, 'VALIDATION_FAILED', errors.map((e) => (e.path ? `${e.path} ${e.message}` : e.message)).join('; '), { errors })

/** 400 for a blockchain name this service does not track (docs/api.md §6). */
export const unsupportedBlockchain = (blockchain: string): HttpProblem =>
  new HttpProblem(400, 'UNSUPPORTED_BLOCKCHAIN', `blockchain ${JSON.stringify(blockchain.slice(0, 40))} is not supported by this service`, {
    errors: [{ path: 'blockchain', message: 'is not a tracked blockchain' }],
  })

export const notFound = (what = 'resource'): HttpProblem => new HttpProblem(404, 'NOT_FOUND', `${what} not found`)
