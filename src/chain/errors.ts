import { BaseError, HttpRequestError, RpcRequestError, SocketClosedError, TimeoutError, WebSocketRequestError } from 'viem'
import { NonRetryableError, RetryableError, walk } from '../common/errors.ts'

/**
 * Errors of the chain layer, on the service's error model (src/common/errors.ts): whether asking
 * again later may give another answer (RPC down, timeout, rate limit) or not (the answer itself is
 * final) is the error's type, not a flag.
 */
export type ChainError = RetryableChainError | NonRetryableChainError

/** Whether `error` was raised by the chain layer (as opposed to viem, the database or a bug). */
export const isChainError = (error: unknown): error is ChainError =>
  error instanceof RetryableChainError || error instanceof NonRetryableChainError

/** Worth retrying later: the RPC failed, timed out or throttled us; the chain state is not at fault. */
export class RetryableChainError extends RetryableError {
  override name = 'RetryableChainError'
  override readonly code: string = 'CHAIN_RETRYABLE'
}

/** Retrying will not help: the chain answered, and the answer is the problem. */
export class NonRetryableChainError extends NonRetryableError {
  override name = 'NonRetryableChainError'
  override readonly code: string = 'CHAIN_NON_RETRYABLE'
}

/** The RPC could not be reached or kept failing: worth retrying later. */
export class ChainUnavailableError extends RetryableChainError {
  override name = 'ChainUnavailableError'
  override readonly code: string = 'CHAIN_UNAVAILABLE'
}

/** The address is not a contract answering `decimals()`: retrying will not help. */
export class TokenNotFoundError extends NonRetryableChainError {
  override name = 'TokenNotFoundError'
  override readonly code: string = 'TOKEN_NOT_FOUND'
}

/** JSON-RPC codes meaning "this node does not serve that method" (EIP-1474 / EIP-1193). */
const methodUnavailableCodes = new Set([-32601, -32004, 4200])
/** How providers word the same refusal when they use a generic code (-32000, -32600, HTTP 4xx). */
const methodUnavailableText =
  /method .{0,80}(does not exist|not (found|supported|available|allowed|whitelisted|enabled))|(not supported|unsupported|not available|disabled|not allowed).{0,40}(method|namespace|plan|tier)|unsupported method|method not found/i

/**
 * Whether an RPC error says the method is not offered at all (as opposed to failing this time).
 * A timeout, a dropped connection or a rate limit is never "unavailable".
 */
export function isMethodUnavailable(error: unknown): boolean {
  if (isTransient(error)) return false
  return (
    walk(error, (e) => {
      const code = (e as { code?: unknown }).code
      if (typeof code === 'number' && methodUnavailableCodes.has(code)) return true
      const texts = [(e as { shortMessage?: unknown }).shortMessage, (e as { details?: unknown }).details]
      return texts.some((t) => typeof t === 'string' && methodUnavailableText.test(t))
    }) !== null
  )
}

/** Rate limits (-32005 standard, 429 and QuickNode's -32007) and the node's internal errors. */
const transientCodes = new Set([-32005, -32007, 429, -32603])
const transientStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500

/** Whether a JSON-RPC error code means "throttled or failed this time" (the same call may succeed later). */
export const isTransientCode = (code: number | undefined): boolean => code !== undefined && transientCodes.has(code)

/**
 * A timeout, a network failure or an overloaded/throttling RPC: the same request may succeed later. What the
 * transport typed (a `RetryableChainError` anywhere in the chain, viem's wrappers included) is; an error of
 * viem's that did not pass the transport is read by its class.
 */
export function isTransient(error: unknown): boolean {
  if (walk(error, (e) => e instanceof RetryableChainError) !== null) return true
  if (!(error instanceof BaseError)) return false
  return Boolean(
    error.walk((e) => {
      if (e instanceof TimeoutError || e instanceof SocketClosedError || e instanceof WebSocketRequestError) return true
      if (e instanceof HttpRequestError) return e.status === undefined || transientStatus(e.status)
      if (e instanceof RpcRequestError) return transientCodes.has(e.code) || (e.status !== undefined && transientStatus(e.status))
      return false
    }),
  )
}
