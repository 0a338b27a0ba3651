/**
 * The service's one error model, in viem's style: a `shortMessage` (one line, the same as
 * `message`: what logs and the CLI print today), optional `details` for the log only, the `cause`,
 * a stable machine `code` and a `name`.
 *
 * Whether a failure is worth retrying is decided by TYPE: a `RetryableError` (asking again later
 * may give another answer) or a `NonRetryableError` (the answer itself is final; retrying only
 * loops). There is no `retryable` flag to forget to set: `instanceof` is the one question every
 * retry site asks, through `isRetryable`.
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
 * Whether a retry loop should try `error` again. The one rule for errors of no known type (a plain
 * `Error`, viem's HTTP/timeout errors, pg's connection errors, a bug): RETRYABLE. Every loop of the
 * service already retries what it does not understand, and an RPC or database hiccup is by far the
 * common case; only a `NonRetryableError` (raised by the code that knows the answer is final)
 * stops a loop. Finer RPC classification (which endpoint to cool down) is the chain layer's
 * `isTransient`, not this.
 */
export function isRetryable(error: unknown): boolean {
  return !(error instanceof NonRetryableError)
}
