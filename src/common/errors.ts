/**
 * The service's one error model, in viem's style: a `shortMessage` (one line, the same as
 * `message`: what logs and the CLI print today), optional `details` for the log only, the `cause`,
 * a stable machine `code` and a `name`.
 *
 * Whether a failure is worth retrying is decided by TYPE: a `RetryableError` (asking again later
 * may give another answer) or a `NonRetryableError` (the answer itself is final; retrying only
 * loops). There is no `retryable` flag to forget to set: every retry site asks `isRetryable`, which
 * reads the first typed error of the cause chain (`walk`), so a typed error that viem or another
 * library wrapped still answers. RPC failures are typed once, in the chain layer's transport
 * (src/chain/failover-transport.ts).
 *
 * The domain and config layers sit below this one and keep their own errors on `Error`
 * (`AmountError`, `ConfigError`): they are answers about an input, never retried by anyone.
 */
export interface PaywatchErrorOptions {
  cause?: unknown
  /** More than the one line: logged, never shown to a client. */
  details?: string
}

export abstract class PaywatchError extends Error {
  abstract override readonly name: string
  /** Stable, machine-readable (SCREAMING_SNAKE): for logs, metrics and tests; never a client's `code`. */
  abstract readonly code: string
  readonly shortMessage: string
  readonly details: string | undefined

  constructor(shortMessage: string, options: PaywatchErrorOptions = {}) {
    // `message` stays the short message alone: error lines and CLI output read it.
    super(shortMessage, options.cause === undefined ? undefined : { cause: options.cause })
    this.shortMessage = shortMessage
    this.details = options.details
  }

  /** viem's `walk`: the first error of the cause chain (this one first) that `match` accepts, else null; without `match`, the innermost. */
  walk(match?: (error: unknown) => boolean): unknown {
    return walk(this, match)
  }
}

/** Causes followed at most: a chain is a handful deep; a longer one is a cycle. */
const MAX_CAUSES = 16

/**
 * Walks the `cause` chain of any error (viem's, pg's, ours), the error itself first: the first one
 * `match` accepts, else null; without `match`, the innermost error. The one loop over causes of the
 * service: sites ask it instead of writing their own.
 */
export function walk(error: unknown, match?: (error: unknown) => boolean): unknown {
  let current = error
  for (let depth = 0; depth < MAX_CAUSES && current !== undefined && current !== null; depth++) {
    if (match?.(current)) return current
    const cause = (current as { cause?: unknown }).cause
    if (cause === undefined || cause === null || cause === current) return match ? null : current
    current = cause
  }
  return match ? null : current
}

/** Asking again later may give another answer: the RPC or the database failed this time. */
export class RetryableError extends PaywatchError {
  override name = 'RetryableError'
  readonly code: string = 'RETRYABLE'
}

/** Asking again gives the same answer: the caller must stop retrying and fail (or mark) now. */
export class NonRetryableError extends PaywatchError {
  override name = 'NonRetryableError'
  readonly code: string = 'NON_RETRYABLE'
}

/**
 * Whether a retry loop should try `error` again: the first typed error of its cause chain decides
 * (a `RetryableError` yes, a `NonRetryableError` no). The one rule for errors of no known type (a plain
 * `Error`, pg's connection errors, a bug): RETRYABLE. Every loop of the service retries after a pause
 * from the backoff table (src/common/backoff.ts) and logs what it does not understand with its stack,
 * and a database or network hiccup is by far the common case; only the code that knows an answer is
 * final stops a loop, by throwing a `NonRetryableError`. Which RPC endpoint to cool down is the
 * transport's own business (src/chain/failover-transport.ts), not a retry decision.
 */
export function isRetryable(error: unknown): boolean {
  return !(walk(error, (e) => e instanceof PaywatchError) instanceof NonRetryableError)
}
