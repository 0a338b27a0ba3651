import { TransactionNotFoundError, TransactionReceiptNotFoundError, type Hash } from 'viem'
import type { MinedTransaction, Transfer } from '../domain/judge.ts'
import { answerSourceOf } from './answer-source.ts'
import { createTraceReader, type RequestClient, type TraceSupport } from './call-trace.ts'
import { isChainError, NonRetryableChainError, RetryableChainError } from './errors.ts'
import { erc20Transfers, internalValueTransfers, ownValueTransfer, type LogLike } from './transfers.ts'

/** The fields of a transaction the evidence needs; viem's `Transaction` (from getBlock/getTransaction) fits. */
export interface FetchedTransaction {
  hash: string
  from: string
  nonce: number | bigint
  to: string | null
  value: bigint
  input: string
}

/** The fields of a receipt the evidence needs; viem's `TransactionReceipt` (also from getBlockReceipts) fits. */
export interface FetchedReceipt {
  transactionHash: string
  status: 'success' | 'reverted'
  blockNumber: bigint
  blockHash: string
  /** Untold in a receipt built from the block's logs (logged-receipts.ts): that transaction ran code. */
  gasUsed?: bigint
  /** The sender as this provider states it (viem's receipt has it): checked against the signed transaction's. */
  from?: string
  logs: readonly LogLike[]
}

export interface ReadOptions {
  /**
   * The expectation's token is the native currency: also trace internal calls (routers forward
   * native value in internal calls, visible only in a trace). Token payments never need a trace.
   */
  native: boolean
}

/** What the reader needs from the chain's client; a viem PublicClient fits. */
export interface EvidenceClient {
  getTransaction(args: { hash: Hash }): Promise<FetchedTransaction & { blockNumber: bigint | null }>
  getTransactionReceipt(args: { hash: Hash }): Promise<FetchedReceipt>
  /** Any EIP-1193 request function (viem types its own per method, hence `never` here). */
  request: (args: never) => Promise<unknown>
}

export interface EvidenceReader {
  /** Reads a transaction by hash (getTransaction + getTransactionReceipt); null while unknown or not mined. */
  fromHash(hash: string, options: ReadOptions): Promise<MinedTransaction | null>
  /** Builds the evidence from a transaction and receipt already fetched (e.g. a whole block's): no refetch. */
  fromFetched(tx: FetchedTransaction, receipt: FetchedReceipt, options: ReadOptions): Promise<MinedTransaction>
  /** What this chain's RPC was found to offer for `debug_traceTransaction`. */
  traceSupport(): TraceSupport
  /**
   * The transaction fields and the evidence last built from them for `hash` (bounded: recent ones
   * only), so that the quorum can check those fields locally instead of asking for them again.
   */
  seen(hash: string): SeenEvidence | undefined
}

export interface SeenEvidence {
  tx: FetchedTransaction
  mined: MinedTransaction
  /**
   * The provider whose answer (its receipt, answer-source.ts) alone the evidence beyond the signed
   * fields rests on; undefined when not known or when a trace (another answer) was read too.
   */
  source?: number
}

/** How many recently read transactions a reader remembers for `seen` (a few blocks' verdicts). */
const SEEN_LIMIT = 4096

/**
 * Reads mined transactions into the judge's `MinedTransaction` for ONE chain (trace support is
 * learned per reader). Errors are ChainErrors: RetryableChainErrors (RPC down, timeout, trace not
 * there yet) mean "judge this later", never "the payment failed".
 */
export function createEvidenceReader(client: EvidenceClient): EvidenceReader {
  const request = client.request as RequestClient['request']
  const traces = createTraceReader({ request: (args) => request(args) })
  const recent = new Map<string, SeenEvidence>()

  async function fromFetched(tx: FetchedTransaction, receipt: FetchedReceipt, options: ReadOptions): Promise<MinedTransaction> {
    if (tx.hash.toLowerCase() !== receipt.transactionHash.toLowerCase()) {
      throw new NonRetryableChainError(`receipt ${receipt.transactionHash} does not belong to transaction ${tx.hash}`)
    }
    const reverted = receipt.status !== 'success'
    const transfers: Transfer[] = reverted ? [] : [...ownValueTransfer(tx, false), ...erc20Transfers(receipt.logs)]
    let internalValueUnknown = false
    const traced = options.native && !reverted && mayMakeInternalCalls(tx, receipt)
    if (traced) {
      const trace = await traces.callTrace(tx.hash)
      if (trace) transfers.push(...internalValueTransfers(trace))
      else internalValueUnknown = true
    }
    const mined: MinedTransaction = {
      hash: tx.hash.toLowerCase(),
      // The sender as the receipt states it: the quorum checks the transaction's signed fields by its
      // hash, which does not cover the sender, so every part of a vote beyond those fields is the
      // receipt's provider's word (evidence-quorum.ts).
      from: (receipt.from ?? tx.from).toLowerCase(),
      nonce: BigInt(tx.nonce),
      reverted,
      blockNumber: receipt.blockNumber,
      blockHash: receipt.blockHash.toLowerCase(),
      transfers,
      ...(internalValueUnknown ? { internalValueUnknown } : {}),
    }
    recent.delete(mined.hash)
    const source = traced ? undefined : voterOf(tx, receipt)
    recent.set(mined.hash, source === undefined ? { tx, mined } : { tx, mined, source })
    if (recent.size > SEEN_LIMIT) recent.delete(recent.keys().next().value!)
    return mined
  }

  async function fromHash(hash: string, options: ReadOptions): Promise<MinedTransaction | null> {
    const [tx, receipt] = await Promise.all([
      client.getTransaction({ hash: hash as Hash }).catch(notFoundAsNull),
      client.getTransactionReceipt({ hash: hash as Hash }).catch(notFoundAsNull),
    ])
    // Unknown, still pending, or the receipt not indexed yet: not mined as far as we can tell.
    if (!tx || !receipt || tx.blockNumber === null) return null
    return fromFetched(tx, receipt, options)
  }

  return { fromHash, fromFetched, traceSupport: () => traces.support(), seen: (hash) => recent.get(hash.toLowerCase()) }
}

function notFoundAsNull(error: unknown): null {
  if (error instanceof TransactionNotFoundError || error instanceof TransactionReceiptNotFoundError) return null
  if (isChainError(error)) throw error
  throw new RetryableChainError('the chain RPC did not answer', { cause: error })
}

/**
 * The provider whose word the evidence is: the receipt's. A receipt that does not state the sender (one
 * told by a block's logs) leaves it to the transaction, whose provider must then be the same one, else
 * the evidence is no one's vote.
 */
function voterOf(tx: FetchedTransaction, receipt: FetchedReceipt): number | undefined {
  const source = answerSourceOf(receipt)
  return receipt.from === undefined && answerSourceOf(tx) !== source ? undefined : source
}

/**
 * A plain value transfer that ran no code (no input, exactly the 21,000 intrinsic gas) cannot have
 * made internal calls: no trace needed. Anything else might (a contract's receive() forwarding, a
 * router, a constructor).
 */
function mayMakeInternalCalls(tx: FetchedTransaction, receipt: FetchedReceipt): boolean {
  return !(tx.to !== null && (tx.input === '0x' || tx.input === '') && receipt.gasUsed === 21_000n)
}

/**
 * The transaction of a block that consumed (sender, nonce), or null. Pure: matches `from`
 * case-insensitively and the nonce exactly.
 */
export function findConsumer<T extends { from: string; nonce: number | bigint }>(
  transactions: readonly T[],
  sender: string,
  nonce: bigint,
): T | null {
  const wanted = sender.toLowerCase()
  for (const tx of transactions) {
    if (BigInt(tx.nonce) === nonce && tx.from.toLowerCase() === wanted) return tx
  }
  return null
}
