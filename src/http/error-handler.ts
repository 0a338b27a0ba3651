import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { HttpProblem, problemBody } from './problem.ts'

export function sendProblem(reply: FastifyReply, problem: HttpProblem): FastifyReply {
  for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value)
  return reply.code(problem.status).type('application/problem+json').send(problemBody(problem))
}

/** Fastify's own request errors, as stable codes. */
const fastifyCodes: Record<string, [number, string, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'PAYLOAD_TOO_LARGE', 'the request body is larger than 64 KiB'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'UNSUPPORTED_MEDIA_TYPE', 'send Content-Type: application/json'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'INVALID_CONTENT_LENGTH', 'Content-Length does not match the body'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'MALFORMED_JSON', 'the body is empty; send a JSON object'],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'MALFORMED_JSON', 'the body is not valid JSON'],
  FST_ERR_BAD_URL: [400, 'BAD_URL', 'the URL is malformed'],
  FST_ERR_MAX_PARAM_LENGTH: [414, 'URI_TOO_LONG', 'a path parameter is longer than 500 characters'],
  FST_ERR_ASYNC_CONSTRAINT: [400, 'BAD_REQUEST', 'the request cannot be routed'],
}

/** Every failure becomes problem+json; a 500 is only ever a bug, logged with its stack. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof HttpProblem) return sendProblem(reply, error)
    if (error.validation) {
      const errors = error.validation.map((v) => ({
        path: (v.instancePath || `/${(v.params as { missingProperty?: string }).missingProperty ?? ''}`).replace(/^\//, '').replace(/\//g, '.'),
        message: v.message ?? 'is invalid',
      }))
      return sendProblem(reply, new HttpProblem(400, 'VALIDATION_FAILED', `${error.validationContext ?? 'request'} is invalid`, { errors }))
    }
    const known = error.code ? fastifyCodes[error.code] : undefined
    if (known) return sendProblem(reply, new HttpProblem(known[0], known[1], known[2]))
    if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON/i.test(error.message))) {
      return sendProblem(reply, new HttpProblem(400, 'MALFORMED_JSON', `the body is not valid JSON: ${error.message}`))
    }
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      return sendProblem(reply, new HttpProblem(error.statusCode, 'BAD_REQUEST', error.message))
    }
    request.log.error({ err: error }, 'unhandled error')
    return sendProblem(reply, new HttpProblem(500, 'INTERNAL_ERROR', 'an unexpected error occurred; it has been logged'))
  })
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, new HttpProblem(404, 'NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`)),
  )
}

/** Errors Fastify raises before routing (malformed URL, over-long parameter): the same problem bodies. */
export function frameworkErrorHandler(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const known = fastifyCodes[error.code]
  void sendProblem(reply, known ? new HttpProblem(known[0], known[1], known[2]) : new HttpProblem(400, 'BAD_REQUEST', 'the request cannot be routed'))
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
  const [status, reason, code, detail] = error.code === 'HPE_HEADER_OVERFLOW'
    ? [431, 'Request Header Fields Too Large', 'HEADERS_TOO_LARGE', 'the request headers are too large']
    : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', 'REQUEST_TIMEOUT', 'the request did not arrive in time; send it again']
      : [400, 'Bad Request', 'BAD_REQUEST', 'the HTTP request is malformed']
  const body = JSON.stringify(problemBody(new HttpProblem(status, code, detail)))
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nconnection: close\r\n` +
    `content-type: application/problem+json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
  // A client that reads nothing must not keep the socket half-open.
  setTimeout(() => socket.destroy(), 1000).unref()
}
