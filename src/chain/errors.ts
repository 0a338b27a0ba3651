/** Errors of the chain layer, in viem's style: a short message plus the cause. */
export class ChainError extends Error {
  override name = 'ChainError'
  readonly shortMessage: string
  constructor(shortMessage: string, options?: { cause?: unknown }) {
    super(shortMessage, options)
    this.shortMessage = shortMessage
  }
}

/** The RPC could not be reached or kept failing: worth retrying later. */
export class ChainUnavailableError extends ChainError {
  override name = 'ChainUnavailableError'
}

/** The address is not a contract answering `decimals()`: retrying will not help. */
export class TokenNotFoundError extends ChainError {
  override name = 'TokenNotFoundError'
}
