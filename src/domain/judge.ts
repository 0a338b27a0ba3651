import type { FailedReason } from './tracking.ts'

// CONTRACT between the evidence reader (chain/payment-evidence.ts), the engine and the judge below;
// keep these types stable (additive changes only).

/** What a tracking expects, in base units; addresses lower-case; native token = 0xeeee…eeee. */
export interface Expectation {
  /** Null for a nonce-less tracking created without a sender (any sender pays). */
  sender: string | null
  /** Null for a nonce-less tracking: its payment is found by receiver, token and amount. */
  nonce: bigint | null
  receiver: string
  token: string
  amount: bigint
  feeReceiver: string | null
  feeAmount: bigint | null
  /** The transaction the integrator named, or null for a trace. */
  transaction: string | null
  commitment: 'confirmed' | 'finalized'
  confirmations: number
  /** A nonce-less payment must be mined in a block after this one (absent: no bound). */
  afterBlock?: bigint
  /**
   * Unix seconds: a payment without a nonce must be mined in a block whose timestamp is at most this (given
   * only for a tracking created without a nonce: with a nonce a deadline is stored and echoed, not judged).
   */
  deadline?: bigint | null
}

/** Value that reached an address inside one transaction (ERC-20 Transfer logs, native value and internal calls). */
export interface Transfer {
  token: string
  to: string
  amount: bigint
}

/** The mined transaction that consumed (sender, nonce), as read from the chain. */
export interface MinedTransaction {
  hash: string
  from: string
  nonce: bigint
  reverted: boolean
  blockNumber: bigint
  blockHash: string
  /** The inclusion block's timestamp (Unix seconds), where the deadline of a nonce-less payment needs it. */
  blockTimestamp?: bigint
  transfers: Transfer[]
  /**
   * The transaction may have moved native value in internal calls, but no trace of them could be
   * read (no provider offers one): `transfers` may miss value, so a failure resting on them is unproven.
   */
  internalValueUnknown?: boolean
}

/** Where the chain stands, for confirmations and finality. */
export interface ChainPosition {
  head: bigint
  /** The chain's finalized block number (RPC tag or head − finalityDepth). */
  finalized: bigint
  /** Whether the transaction's inclusion block is still on the canonical chain. */
  canonical: boolean
}

export interface Evidence {
  /** The transaction the tracking named, when it exists on chain (mined). */
  given: MinedTransaction | null
  /**
   * The transaction that consumed (sender, nonce), or null when the nonce is not consumed yet (or not
   * known: a `given` sent by another address is judged without it). The same object as `given` when
   * it was not replaced.
   */
  consumer: MinedTransaction | null
  /**
   * A nonce-less trace (no nonce, no transaction): the transactions that moved something to the
   * receiver, in chain order; the first that pays in full is the payment. Absent: `consumer` alone.
   */
  candidates?: MinedTransaction[]
  /** A tracking without a nonce, with a deadline: the first block whose timestamp is past it, once seen. */
  pastDeadline?: { blockNumber: bigint } | null
  position: ChainPosition
}

/** The transaction that fails a payment, and why: the verdict once it reaches the commitment. */
export interface Failing {
  reason: FailedReason
  transaction: string
}

export type Judgement =
  /** `failing`: the judged transaction fails the payment, but has not reached the commitment yet. */
  | { status: 'pending'; confirmations: { required: number; passed: number }; failing?: Failing }
  | { status: 'success'; transaction: string }
  /** `transaction` null: a deadline passed with no payment found (no transaction to name). */
  | { status: 'failed'; reason: FailedReason; transaction: string | null }

/** The native currency's token address on every EVM chain, lower-case. */
export const NATIVE_TOKEN = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee'

/** Sum of `token` that reached `to` inside one transaction (addresses compared lower-case). */
export function received(transfers: readonly Transfer[], token: string, to: string): bigint {
  const wantToken = token.toLowerCase()
  const wantTo = to.toLowerCase()
  let total = 0n
  for (const t of transfers) {
    if (t.token.toLowerCase() === wantToken && t.to.toLowerCase() === wantTo) total += t.amount
  }
  return total
}

function receivedAnything(transfers: readonly Transfer[], to: string): boolean {
  const wantTo = to.toLowerCase()
  return transfers.some((t) => t.to.toLowerCase() === wantTo && t.amount > 0n)
}

type PaymentMismatch = 'RECEIVER_MISMATCH' | 'TOKEN_MISMATCH' | 'AMOUNT_MISMATCH' | 'MISMATCH'

/**
 * What is wrong with what the transaction moved, or null when it pays. Receiver, token and amount
 * exclude each other (nothing / something else / too little of the token); a short fee alone, or
 * a short fee on top of one of them, is `MISMATCH`. When the fee receiver is the receiver itself,
 * it must get `amount + fee_amount` (otherwise paying only `amount` would satisfy both rows).
 * An expected amount of zero needs nothing to reach the receiver.
 */
export function paymentMismatch(expectation: Expectation, transfers: readonly Transfer[]): PaymentMismatch | null {
  const { receiver, token, amount } = expectation
  const toReceiver = received(transfers, token, receiver)
  let primary: PaymentMismatch | null = null
  if (amount > 0n) {
    if (toReceiver === 0n) primary = receivedAnything(transfers, receiver) ? 'TOKEN_MISMATCH' : 'RECEIVER_MISMATCH'
    else if (toReceiver < amount) primary = 'AMOUNT_MISMATCH'
  }
  const feeAmount = expectation.feeAmount ?? 0n
  let feeShort = false
  if (expectation.feeReceiver !== null && feeAmount > 0n) {
    const sameAddress = expectation.feeReceiver.toLowerCase() === receiver.toLowerCase()
    feeShort = sameAddress ? toReceiver < amount + feeAmount : received(transfers, token, expectation.feeReceiver) < feeAmount
  }
  return feeShort ? 'MISMATCH' : primary
}

/**
 * Whether the judged transaction (paying or failing) reached the commitment, else its pending
 * progress. `confirmed`: the inclusion block is the first confirmation, so passed = head −
 * inclusion + 1 and the verdict stands once passed ≥ confirmations. `finalized`: once the inclusion
 * block is at or below the finalized block; while waiting, required = head − finalized + 1 (the
 * chain's current finality lag counted the same way, so the block finalizes exactly when passed
 * would reach required) and passed = head − inclusion + 1, capped below required (a finalized tag
 * that lags irregularly must not show "3 of 3" while pending). A block that is no longer canonical
 * has passed nothing.
 */
function commitment(expectation: Expectation, tx: { blockNumber: bigint }, position: ChainPosition): 'reached' | Pending {
  const depth = position.head - tx.blockNumber + 1n
  const passed = position.canonical && depth > 0n ? depth : 0n
  const required = requiredConfirmations(expectation, position)
  if (expectation.commitment === 'finalized') {
    if (position.canonical && tx.blockNumber <= position.finalized) return 'reached'
    return pending(required, passed < required ? passed : required - 1n)
  }
  if (position.canonical && passed >= required) return 'reached'
  return pending(required, passed)
}

function requiredConfirmations(expectation: Expectation, position: ChainPosition): bigint {
  if (expectation.commitment === 'confirmed') return BigInt(expectation.confirmations)
  const lag = position.head - position.finalized + 1n
  return lag > 1n ? lag : 1n
}

type Pending = Extract<Judgement, { status: 'pending' }>

function pending(required: bigint, passed: bigint): Pending {
  return { status: 'pending', confirmations: { required: Number(required), passed: Number(passed) } }
}

const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase()

/**
 * Judges a payment (docs/api.md, "How payments are judged"), rows in order. Pure: the
 * engine gathers the evidence, this decides. The judged transaction is the one that consumed
 * (sender, nonce): `consumer`, or `given` itself when it carries the right sender and nonce (being
 * mined, it consumed that nonce). A different consumer than the given transaction is a replacement:
 * judged in its place; if it pays, success names its hash, if not the result is
 * `TRANSACTION_MISMATCH` (the record keeps the given hash, see `recordedTransaction`).
 *
 * Either verdict waits for the commitment of the transaction it rests on (its confirmations, or
 * finality, and a canonical block): until then the payment is pending, with that transaction's
 * progress, and a failing one is named in `failing`. A reorg before the commitment therefore
 * judges whatever replaces the transaction, never a verdict already given.
 */
export function judge(expectation: Expectation, evidence: Evidence): Judgement {
  const { position } = evidence
  const verdict = decide(expectation, evidence)
  if (!verdict) {
    // A tracking without a nonce whose deadline a block has passed with no payment found: that block's commitment.
    const past = evidence.pastDeadline
    if (!past) return pending(requiredConfirmations(expectation, position), 0n)
    const reached = commitment(expectation, past, position)
    return reached === 'reached' ? { status: 'failed', reason: 'TRACKING_TIMED_OUT', transaction: null } : reached
  }
  const reached = commitment(expectation, verdict.tx, position)
  if (reached !== 'reached') {
    return verdict.reason ? { ...reached, failing: { reason: verdict.reason, transaction: verdict.tx.hash } } : reached
  }
  return verdict.reason
    ? { status: 'failed', reason: verdict.reason, transaction: verdict.tx.hash }
    : { status: 'success', transaction: verdict.tx.hash }
}

/**
 * The transaction the verdict rests on, and the failed reason when it does not pay (null: it
 * pays); null when nothing is mined yet. The engine records where this transaction was found, so
 * that a reorg of its block drops the verdict in waiting.
 */
export function decide(
  expectation: Expectation,
  evidence: Omit<Evidence, 'position'>,
): { tx: MinedTransaction; reason: FailedReason | null } | null {
  const verdict = decideMined(expectation, evidence)
  // Mined past its deadline, a transaction is not the payment: the deadline times the tracking out instead.
  return verdict && minedPastDeadline(expectation, verdict.tx) ? null : verdict
}

/**
 * Whether `tx` was mined in a block past the expectation's deadline, as far as its evidence tells (a
 * block's timestamp, where the engine read it: the block a trace's candidates come from, and the fast
 * path's check of a tracking with a deadline).
 */
export function minedPastDeadline(expectation: Expectation, tx: MinedTransaction): boolean {
  const { deadline } = expectation
  return deadline !== undefined && deadline !== null && tx.blockTimestamp !== undefined && tx.blockTimestamp > deadline
}

function decideMined(
  expectation: Expectation,
  evidence: Omit<Evidence, 'position'>,
): { tx: MinedTransaction; reason: FailedReason | null } | null {
  const { given } = evidence
  if (expectation.nonce === null) {
    if (isTrace(expectation)) {
      // Found by receiver: the first candidate in chain order that pays in full; the others are
      // not this payment (never a failure by a transaction the tracking did not name).
      const candidates = evidence.candidates ?? (evidence.consumer ? [evidence.consumer] : [])
      const paying = candidates.find((tx) => paysNonceless(expectation, tx))
      return paying ? { tx: paying, reason: null } : null
    }
    // A named transaction: once seen, its sender and nonce are the tracking's (a given sender that
    // differs is SENDER_MISMATCH below), and it is judged as every payment is.
    // (A trace that found its payment by receiver and then got that very transaction named: the found one.)
    const { consumer } = evidence
    const named = given ?? (consumer && same(consumer.hash, expectation.transaction ?? '') ? consumer : null)
    if (!named) return null
    return decideMined({ ...expectation, sender: expectation.sender ?? named.from, nonce: named.nonce }, { ...evidence, given: named })
  }
  const sender = expectation.sender ?? ''
  if (given) {
    if (!same(given.from, sender)) return { tx: given, reason: 'SENDER_MISMATCH' }
    if (given.nonce !== expectation.nonce) return { tx: given, reason: 'NONCE_MISMATCH' }
  }
  // The consumer is by definition the sender's transaction at that nonce: evidence of one from
  // another sender or nonce (a provider's word against how it was matched) consumed nothing here.
  const { consumer } = evidence
  const consumed = consumer && same(consumer.from, sender) && consumer.nonce === expectation.nonce ? consumer : null
  const judged = consumed ?? given
  if (!judged) return null
  if (judged.reverted) return { tx: judged, reason: 'FAILED' }
  const replaced = expectation.transaction !== null && !same(judged.hash, expectation.transaction)
  const mismatch = paymentMismatch(expectation, judged.transfers)
  if (mismatch) return { tx: judged, reason: replaced ? 'TRANSACTION_MISMATCH' : mismatch }
  return { tx: judged, reason: null }
}

/** A nonce-less tracking that names no transaction: its payment is searched for by receiver. */
export const isTrace = (expectation: Expectation): boolean => expectation.nonce === null && expectation.transaction === null

/**
 * Whether `tx` is a nonce-less trace's payment (docs/api.md, "Payments without a nonce"): mined after
 * `afterBlock`, by `deadline`, from `sender` when one was given, not reverted, and paying the receiver
 * at least `amount` of the token (and the fee receiver at least `fee_amount`).
 */
export function paysNonceless(expectation: Expectation, tx: MinedTransaction): boolean {
  if (tx.reverted) return false
  if (expectation.afterBlock !== undefined && tx.blockNumber <= expectation.afterBlock) return false
  const { deadline } = expectation
  if (deadline !== undefined && deadline !== null && (tx.blockTimestamp === undefined || tx.blockTimestamp > deadline)) return false
  if (expectation.sender !== null && !same(tx.from, expectation.sender)) return false
  return paymentMismatch(expectation, tx.transfers) === null
}

/**
 * The hash the tracking record should carry after a judgement: the paying transaction on success
 * (the replacing one after a speed-up), the integrator's own hash when one was given and the
 * result is a failure (a non-paying replacement does not overwrite it), and for a trace the
 * transaction that was found.
 */
export function recordedTransaction(expectation: Expectation, judgement: Judgement): string | null {
  if (judgement.status === 'success') return judgement.transaction
  if (judgement.status === 'failed') return expectation.transaction ?? judgement.transaction
  return expectation.transaction
}
