import { BaseError, HttpRequestError, RpcRequestError } from 'viem'
import { retryAfterMs } from '../common/backoff.ts'
import { PaywatchError, walk } from '../common/errors.ts'
import { isChainError, isTransient } from './errors.ts'

/** What one log line says about a failed RPC request. */
export interface RpcFailureFields {
  /** Host (and port) of the provider that failed: never the path or query, which may hold an API key. */
  provider?: string
  /** The error in one line. */
  error: string
}

/**
 * The fields of the single warning line logged for an expected RPC failure (timeout, dropped
 * connection, 5xx, rate limit, an RPC error answer): a stack trace says nothing more about a
 * provider having a bad moment, and under a flaky provider it would drown the log.
 */
export function rpcFailureFields(error: unknown): RpcFailureFields {
  return { ...(providerOf(error) ? { provider: providerOf(error) } : {}), error: describe(error) }
}

/** Log fields for any failure: the one-line form for RPC failures, the error with its stack for the rest. */
export function failureFields(error: unknown): RpcFailureFields | { err: unknown } {
  return isRpcFailure(error) ? rpcFailureFields(error) : { err: error }
}

/** Whether the error comes from the RPC (reached or not), as opposed to our own code or database. */
export function isRpcFailure(error: unknown): boolean {
  return isTransient(error) || isChainError(error) || error instanceof BaseError
}

/** The pause an HTTP 429/503 answer asked for with `Retry-After`, in ms; `now` (epoch ms) from the caller's clock. */
export function retryAfterOf(error: unknown, now: number): number | undefined {
  const answer = walk(error, (e) => (e instanceof HttpRequestError || e instanceof RpcRequestError) && e.headers !== undefined) as
    | HttpRequestError
    | RpcRequestError
    | null
  return retryAfterMs(answer?.headers?.get('retry-after'), now)
}

function providerOf(error: unknown): string | undefined {
  const located = walk(error, (e) => typeof (e as { url?: unknown }).url === 'string') as { url: string } | null
  if (!located) return undefined
  try {
    return new URL(located.url).host
  } catch {
    return undefined
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const parts: string[] = []
  // Every error of the chain, outermost first (the matcher collects and never stops the walk).
  walk(error, (e) => {
    if (!(e instanceof Error)) return true
    const short = e instanceof BaseError || e instanceof PaywatchError ? e.shortMessage : e.message
    const details = e instanceof BaseError && e.details && e.details !== short ? e.details : undefined
    const code = e instanceof RpcRequestError ? ` (code ${e.code})` : e instanceof HttpRequestError && e.status ? ` (HTTP ${e.status})` : ''
    const text = `${short}${code}${details ? `: ${details}` : ''}`.split('\n')[0]!
    if (text && !parts.includes(text)) parts.push(text)
    return false
  })
  return parts.join(' ← ') || error.name
}
