import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { HttpProblem, noRoute, problem, problemBody, PROBLEMS, type ProblemCode } from './problem.ts'

export function sendProblem(reply: FastifyReply, answer: HttpProblem): FastifyReply {
  for (const [name, value] of Object.entries(answer.headers)) reply.header(name, value)
  // Serialized here, in problemBody()'s order: the route schemas document problems, they do not serialize them.
  return reply
    .code(answer.status)
    .type('application/problem+json')
    .send(JSON.stringify(problemBody(answer)))
}

/** Fastify's own request errors, as stable codes. */
const fastifyCodes: Record<string, [ProblemCode, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: ['PAYLOAD_TOO_LARGE', 'the request body is larger than 64 KiB'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['UNSUPPORTED_MEDIA_TYPE', 'send Content-Type: application/json'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['INVALID_CONTENT_LENGTH', 'Content-Length does not match the body'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['MALFORMED_JSON', 'the body is empty; send a JSON object'],
  FST_ERR_CTP_INVALID_JSON_BODY: ['MALFORMED_JSON', 'the body is not valid JSON'],
  FST_ERR_BAD_URL: ['BAD_URL', 'the URL is malformed'],
  FST_ERR_MAX_PARAM_LENGTH: ['URI_TOO_LONG', 'a path parameter is longer than 500 characters'],
  FST_ERR_ASYNC_CONSTRAINT: ['BAD_REQUEST', 'the request cannot be routed'],
}

/** Every failure becomes problem+json; a 500 is only ever a bug, logged with its stack. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof HttpProblem) return sendProblem(reply, error)
    if (error.validation) {
      const errors = error.validation.map((v) => ({
        path: (v.instancePath || `/${(v.params as { missingProperty?: string }).missingProperty ?? ''}`)
          .replace(/^\//, '')
          .replace(/\//g, '.'),
        message: v.message ?? 'is invalid',
      }))
      return sendProblem(reply, problem('VALIDATION_FAILED', `${error.validationContext ?? 'request'} is invalid`, { errors }))
    }
    const known = error.code && Object.hasOwn(fastifyCodes, error.code) ? fastifyCodes[error.code] : undefined
    if (known) return sendProblem(reply, problem(...known))
    if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON/i.test(error.message))) {
      return sendProblem(reply, problem('MALFORMED_JSON', `the body is not valid JSON: ${error.message}`))
    }
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      return sendProblem(reply, problem('BAD_REQUEST', error.message, { status: error.statusCode }))
    }
    request.log.error({ err: error }, 'unhandled error')
    return sendProblem(reply, problem('INTERNAL_ERROR', 'an unexpected error occurred; it has been logged'))
  })
  app.setNotFoundHandler((request, reply) => sendProblem(reply, noRoute(request.method, request.url)))
}

/** Errors Fastify raises before routing (malformed URL, over-long parameter): the same problem bodies. */
export function frameworkErrorHandler(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const known = Object.hasOwn(fastifyCodes, error.code) ? fastifyCodes[error.code] : undefined
  void sendProblem(reply, known ? problem(...known) : problem('BAD_REQUEST', 'the request cannot be routed'))
}

/**
 * Requests Node's HTTP server refuses (bad framing, headers too large, not complete within the request
 * time-out): a problem, then the connection closes.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy()
    return
  }
  const [code, detail]: [ProblemCode, string] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? ['HEADERS_TOO_LARGE', 'the request headers are too large']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ['REQUEST_TIMEOUT', 'the request did not arrive in time; send it again']
        : ['BAD_REQUEST', 'the HTTP request is malformed']
  const { status, title } = PROBLEMS[code]
  const body = JSON.stringify(problemBody(problem(code, detail)))
  socket.end(
    `HTTP/1.1 ${status} ${title}\r\nconnection: close\r\n` +
      `content-type: application/problem+json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  )
  // A client that reads nothing must not keep the socket half-open.
  setTimeout(() => socket.destroy(), 1000).unref()
}
