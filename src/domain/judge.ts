import type { FailedReason } from './tracking.ts'

// CONTRACT between the evidence reader (chain/payment-evidence.ts) and the engine. The judge body
// is being written in its own change; keep these types stable.

/** What a tracking expects, in base units; addresses lower-case; native token = 0xeeee…eeee. */
export interface Expectation {
  sender: string
  nonce: bigint
  receiver: string
  token: string
  amount: bigint
  feeReceiver: string | null
  feeAmount: bigint | null
  /** The transaction the integrator named, or null for a trace. */
  transaction: string | null
  commitment: 'confirmed' | 'finalized'
  confirmations: number
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
  transfers: Transfer[]
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
  position: ChainPosition
}

export type Judgement =
  | { status: 'pending'; confirmations: { required: number; passed: number } }
  | { status: 'success'; transaction: string }
  | { status: 'failed'; reason: FailedReason; transaction: string }

export declare function judge(expectation: Expectation, evidence: Evidence): Judgement
