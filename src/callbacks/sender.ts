import http from 'node:http'
import https from 'node:https'
import { isIP } from 'node:net'
import { performance } from 'node:perf_hooks'
import { ForbiddenCallbackError, forbiddenAddressReason, guardedLookup, hostOf } from './address-guard.ts'

/** What one POST to a callback URL came to. */
export interface SendResult {
  durationMs: number
  /** The answer's status, or null when there was none (timeout, connection error, refused). */
  statusCode: number | null
  error: string | null
  /** The address is forbidden (SSRF guard): retrying cannot help. */
  refused: boolean
  /** The first bytes of the answer, for the attempt log. */
  excerpt: string | null
  /** `forward_to` of a JSON answer body. */
  forwardTo: string | null
}

export interface CallbackSender {
  send(url: string, body: string, headers: Record<string, string>): Promise<SendResult>
  close(): void
}

const EXCERPT_BYTES = 512
/** Enough for a `{"forward_to": …}` answer; the rest of a larger answer is drained and ignored. */
const READ_BYTES = 16 * 1024
const MAX_FORWARD_TO = 2048

class CallbackTimeoutError extends Error {
  override name = 'CallbackTimeoutError'
  readonly code = 'ETIMEDOUT'
}

/**
 * POSTs callbacks over keep-alive connections. Redirects are not followed (a 3xx is a failed attempt);
 * unless private callbacks are allowed, every connection goes through the SSRF guard's lookup.
 */
export function createCallbackSender(options: { timeoutMs: number; allowPrivate: boolean }): CallbackSender {
  const agentOptions = { keepAlive: true, keepAliveMsecs: 10_000, maxFreeSockets: 64, scheduling: 'lifo' as const }
  const agents = { 'http:': new http.Agent(agentOptions), 'https:': new https.Agent(agentOptions) }

  function send(url: string, body: string, headers: Record<string, string>): Promise<SendResult> {
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    const failed = (error: Error & { code?: string }, statusCode: number | null = null): SendResult => ({
      durationMs: elapsed(), statusCode, refused: error instanceof ForbiddenCallbackError,
      error: describe(error), excerpt: null, forwardTo: null,
    })

    let target: URL
    try {
      target = new URL(url)
    } catch {
      return Promise.resolve(failed(new Error('the callback is not a valid URL')))
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:') return Promise.resolve(failed(new Error('the callback is not an http(s) URL')))
    const host = hostOf(target)
    if (!options.allowPrivate && isIP(host)) {
      const reason = forbiddenAddressReason(host)
      if (reason) return Promise.resolve(failed(new ForbiddenCallbackError(host, host, reason)))
    }

    return new Promise<SendResult>((resolve) => {
      let settled = false
      const finish = (result: SendResult) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resolve(result)
      }
      const payload = Buffer.from(body, 'utf8')
      let request: http.ClientRequest
      try {
        request = (target.protocol === 'https:' ? https : http).request(target, {
          method: 'POST',
          agent: target.protocol === 'https:' ? agents['https:'] : agents['http:'],
          headers: { ...headers, 'content-length': String(payload.length), 'user-agent': 'Paywatch-Callbacks/1' },
          ...(options.allowPrivate ? {} : { lookup: guardedLookup }),
        })
      } catch (error) {
        settled = true
        return resolve(failed(error as Error))
      }
      const timer = setTimeout(() => {
        request.destroy(new CallbackTimeoutError(`no complete answer within ${options.timeoutMs / 1000} s`))
      }, options.timeoutMs)
      request.on('error', (error) => finish(failed(error)))
      request.on('response', (response) => {
        const chunks: Buffer[] = []
        let kept = 0
        response.on('data', (chunk: Buffer) => {
          if (kept >= READ_BYTES) return
          chunks.push(chunk)
          kept += chunk.length
        })
        response.on('error', (error) => finish(failed(error, response.statusCode ?? null)))
        response.on('end', () => {
          const statusCode = response.statusCode ?? 0
          const text = Buffer.concat(chunks).subarray(0, READ_BYTES).toString('utf8')
          finish({
            durationMs: elapsed(), statusCode, refused: false, error: null,
            excerpt: excerptOf(text),
            forwardTo: statusCode === 200 || statusCode === 202 ? forwardToOf(text) : null,
          })
        })
      })
      request.end(payload)
    })
  }

  return {
    send,
    close() {
      agents['http:'].destroy()
      agents['https:'].destroy()
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
  const cut = bytes.length > EXCERPT_BYTES ? bytes.subarray(0, EXCERPT_BYTES).toString('utf8').replace(/\uFFFD$/, '') : text
  return cut.replace(/\u0000/g, '')
}

/** A JSON answer's `forward_to`, when it is a usable string. */
function forwardToOf(text: string): string | null {
  if (!text.trimStart().startsWith('{')) return null
  try {
    const value = (JSON.parse(text) as Record<string, unknown>).forward_to
    return typeof value === 'string' && value.trim() !== '' && value.length <= MAX_FORWARD_TO ? value : null
  } catch {
    return null
  }
}
