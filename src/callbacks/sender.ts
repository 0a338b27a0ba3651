import { isIP } from 'node:net'
import { performance } from 'node:perf_hooks'
import { Agent } from 'undici'
import { forwardTargetProblem } from '../domain/forward-target.ts'
import { ForbiddenCallbackError, forbiddenAddressReason, guardedLookup, hostOf } from './address-guard.ts'
import { RetryableError } from '../common/errors.ts'

/** What one POST to a callback URL came to. */
export interface SendResult {
  durationMs: number
  /** The answer's status, or null when there was none (timeout, connection error, refused). */
  statusCode: number | null
  /** The failure, in one line for the attempt log (null when the receiver answered). */
  error: string | null
  /**
   * Why no answer came, as a typed error (null when the receiver answered): the classifier asks
   * `isRetryable` of it, as every retry site does (a forbidden address is a NonRetryableError: dead at once).
   */
  failure?: Error | null
  /** The first bytes of the answer, for the attempt log. */
  excerpt: string | null
  /** `forward_to` of a JSON answer body. */
  forwardTo: string | null
  /** The answer's `Retry-After` header as sent (seconds or an HTTP date), read by the classifier. */
  retryAfter?: string | null
}

export interface CallbackSender {
  send(url: string, body: string, headers: Record<string, string>): Promise<SendResult>
  close(): void
}

const EXCERPT_BYTES = 512
/** Enough for a `{"forward_to": …}` answer; the rest of a larger answer is drained and ignored. */
const READ_BYTES = 16 * 1024

/** The receiver did not answer in time: the attempt failed, a later one may succeed. */
export class CallbackTimeoutError extends RetryableError {
  override name = 'CallbackTimeoutError'
  override readonly code = 'ETIMEDOUT'
}

/**
 * POSTs callbacks over keep-alive connections (undici: about half the event-loop time per request of
 * node:http, measured). Redirects are not followed (a 3xx is a failed attempt); unless private
 * callbacks are allowed, every connection goes through the SSRF guard's lookup.
 */
export function createCallbackSender(options: { timeoutMs: number; allowPrivate: boolean }): CallbackSender {
  const agent = new Agent({
    keepAliveTimeout: 10_000,
    // HTTP/1.1 only, as integrators' receivers expect; the worker's pipeline bounds requests per host.
    allowH2: false,
    connect: { timeout: options.timeoutMs, ...(options.allowPrivate ? {} : { lookup: guardedLookup }) },
  })

  function send(url: string, body: string, headers: Record<string, string>): Promise<SendResult> {
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    const failed = (error: Error & { code?: string }, statusCode: number | null = null): SendResult => ({
      durationMs: elapsed(),
      statusCode,
      failure: error,
      error: describe(error),
      excerpt: null,
      forwardTo: null,
    })

    let target: URL
    try {
      target = new URL(url)
    } catch {
      return Promise.resolve(failed(new Error('the callback is not a valid URL')))
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:')
      return Promise.resolve(failed(new Error('the callback is not an http(s) URL')))
    const host = hostOf(target)
    if (!options.allowPrivate && isIP(host)) {
      const reason = forbiddenAddressReason(host)
      if (reason) return Promise.resolve(failed(new ForbiddenCallbackError(host, host, reason)))
    }

    return new Promise<SendResult>((resolve) => {
      let settled = false
      let timedOut = false
      let controller: { abort(reason: Error): void } | undefined
      const timeout = () => new CallbackTimeoutError(`no complete answer within ${options.timeoutMs / 1000} s`)
      const timer = setTimeout(() => {
        timedOut = true
        controller?.abort(timeout())
        // The attempt ends now, also while undici is still connecting; a request not yet started is aborted when it starts.
        onError(timeout())
      }, options.timeoutMs)
      const onError = (error: Error, statusCode: number | null = null) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resolve(failed(timedOut ? timeout() : error, statusCode))
      }
      let statusCode = 0
      let retryAfter: string | null = null
      const chunks: Buffer[] = []
      let kept = 0
      // undici's dispatch handler directly: no response stream, promise or AbortSignal per attempt.
      agent.dispatch(
        {
          origin: target.origin,
          path: target.pathname + target.search,
          method: 'POST',
          headers: { ...headers, 'user-agent': 'Paywatch-Callbacks/1' },
          body: Buffer.from(body, 'utf8'),
          // The whole attempt is bounded by the timer above.
          headersTimeout: 0,
          bodyTimeout: 0,
        },
        {
          onRequestStart(started) {
            controller = started
            if (timedOut) started.abort(timeout())
          },
          onResponseStart(_controller, status, headers) {
            statusCode = status
            const value = headers['retry-after']
            retryAfter = (Array.isArray(value) ? value[0] : value) ?? null
          },
          onResponseData(_controller, chunk) {
            if (kept >= READ_BYTES) return
            chunks.push(chunk)
            kept += chunk.length
          },
          onResponseEnd() {
            if (settled) return
            settled = true
            clearTimeout(timer)
            const text = Buffer.concat(chunks).subarray(0, READ_BYTES).toString('utf8')
            resolve({
              durationMs: elapsed(),
              statusCode,
              failure: null,
              error: null,
              excerpt: excerptOf(text),
              forwardTo: statusCode === 200 || statusCode === 202 ? forwardToOf(text) : null,
              retryAfter,
            })
          },
          onResponseError(_controller, error) {
            onError(error, statusCode === 0 ? null : statusCode)
          },
        },
      )
    })
  }

  return {
    send,
    close() {
      void agent.destroy()
    },
  }
}

function describe(error: Error & { code?: string }): string {
  if (error instanceof ForbiddenCallbackError) return `refused: ${error.shortMessage}`
  if (error instanceof CallbackTimeoutError) return `timeout: ${error.message}`
  return error.code ? `${error.code}: ${error.message}` : error.message
}

/** Text for the attempt log: the first bytes, without NUL (which PostgreSQL text cannot hold). */
function excerptOf(text: string): string | null {
  if (text === '') return null
  const bytes = Buffer.from(text, 'utf8')
  const cut =
    bytes.length > EXCERPT_BYTES
      ? bytes
          .subarray(0, EXCERPT_BYTES)
          .toString('utf8')
          .replace(/\uFFFD$/, '')
      : text
  return cut.replace(/\u0000/g, '')
}

/**
 * A JSON answer's `forward_to`, when it is usable (the same rule as at create, plus paths on the widget
 * page's own site); anything else is ignored, the attempt still counts.
 */
function forwardToOf(text: string): string | null {
  if (!text.trimStart().startsWith('{')) return null
  try {
    const value = (JSON.parse(text) as Record<string, unknown>).forward_to
    return forwardTargetProblem(value, { paths: true }) === null ? (value as string) : null
  } catch {
    return null
  }
}
