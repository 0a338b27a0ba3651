import type { Transaction, TransactionReceipt, Hash } from 'viem'
import type { ChainReader, FullBlock } from '../chain/chain-reader.ts'
import { isMethodUnavailable, isTransient } from '../chain/errors.ts'
import { isRetryable } from '../common/errors.ts'
import type { EvidenceReader, FetchedReceipt } from '../chain/payment-evidence.ts'
import { receiptsFromLogs } from '../chain/logged-receipts.ts'
import { decide, type MinedTransaction } from '../domain/judge.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { TrackingMatch } from '../store/tracking-matches.ts'
import { expectationOf, paysNative } from './expectation.ts'

/** What one block says about one candidate tracking. */
export type BlockFinding =
  | { kind: 'found'; tracking: Tracking; given: MinedTransaction | null; consumer: MinedTransaction | null; match: TrackingMatch }
  /** The transaction is in the block but could not be read (RPC failed): stored, read again later. */
  | { kind: 'unresolved'; tracking: Tracking; match: TrackingMatch; error: unknown }
  /**
   * The transaction is in the block but its evidence can never be read (a NonRetryableError: the
   * RPC's answer itself is wrong): not stored, so that no block reads it again.
   */
  | { kind: 'unreadable'; tracking: Tracking; error: unknown }

export interface ReceiptSource {
  /** Receipts of `hashes` in `block`; a receipt the RPC does not have (yet) is missing from the map. */
  receipts(block: FullBlock, hashes: string[]): Promise<Map<string, FetchedReceipt>>
  /**
   * Every receipt of `block`: one `eth_getBlockReceipts` by the block's hash (one receipt per
   * transaction, in parallel, where the RPC does not offer it). Matching by receiver needs them all.
   */
  all(block: FullBlock): Promise<Map<string, FetchedReceipt>>
  /**
   * Every receipt of `block` in one `eth_getBlockReceipts`, or undefined when that cannot be had in
   * one request (the RPC does not offer it, or failed): a read ahead, never a per-transaction fallback.
   */
  whole(blockHash: string): Promise<Map<string, FetchedReceipt> | undefined>
  /**
   * The receipts the block's logs tell, in one `eth_getLogs` by the block's hash (logged-receipts.ts):
   * those of the transactions that emitted a log. Undefined when that answer cannot be had or tells
   * nothing sure: a read ahead, never a fallback.
   */
  logged(blockHash: string): Promise<Map<string, FetchedReceipt> | undefined>
}

/** A block's receipts read ahead: every one (`whole`), or those its logs tell (`logged`). */
export type ReceiptsAhead = { whole: Map<string, FetchedReceipt> } | { logged: Map<string, FetchedReceipt> }

/**
 * The receipts of a block read ahead as a source: a whole block's answer everything; the logged ones
 * answer for the transactions that emitted logs, and `fallback` reads the others' (a payment that
 * reverted or moved no token) the usual way.
 */
export function receiptsAhead(read: ReceiptsAhead, fallback: ReceiptSource): ReceiptSource {
  if ('whole' in read) return fetchedReceipts(read.whole)
  const { logged } = read
  return {
    ...fallback,
    async receipts(block, hashes) {
      const found = new Map<string, FetchedReceipt>()
      const rest: string[] = []
      for (const hash of hashes.map((h) => h.toLowerCase())) {
        const receipt = logged.get(hash)
        if (receipt) found.set(hash, receipt)
        else rest.push(hash)
      }
      if (rest.length > 0) for (const [hash, receipt] of await fallback.receipts(block, rest)) found.set(hash, receipt)
      return found
    },
  }
}

/** A source that answers from a block's receipts already read (no request). */
export function fetchedReceipts(all: Map<string, FetchedReceipt>): ReceiptSource {
  const pick = (hashes: string[]) => new Map(hashes.flatMap((h) => (all.has(h) ? [[h, all.get(h)!] as const] : [])))
  return {
    receipts: async (_block, hashes) => pick(hashes.map((h) => h.toLowerCase())),
    all: async () => all,
    whole: async () => all,
    logged: async () => all,
  }
}

/**
 * Receipts for the matched transactions: one `eth_getTransactionReceipt` for a lone payment, else one
 * `eth_getBlockReceipts` when the RPC offers it (learned once per chain): one request per block, not
 * one per payment. A whole block's receipts weigh more (megabytes on a busy chain), but providers
 * count and bill requests, and on Anvil a 50-transaction block's receipts come back as fast as ten
 * single receipts asked in parallel (docs/performance.md, "Block to callback").
 */
export function createReceiptSource(reader: ChainReader, options: { blockReceiptsFrom?: number } = {}): ReceiptSource {
  const threshold = options.blockReceiptsFrom ?? 2
  let blockReceipts: 'unknown' | 'supported' | 'unsupported' = 'unknown'
  let blockLogs: 'unknown' | 'supported' | 'unsupported' = 'unknown'
  const perTransaction = async (hashes: string[]) => {
    const receipts = await Promise.all(hashes.map((hash) => reader.receipt(hash as Hash)))
    return new Map(receipts.filter((r): r is TransactionReceipt => r !== null).map((r) => [r.transactionHash.toLowerCase(), r]))
  }
  const byHash = (receipts: TransactionReceipt[]) => new Map(receipts.map((r) => [r.transactionHash.toLowerCase(), r]))
  /**
   * The block's receipts (`only` those) in one `eth_getBlockReceipts`, learning once whether the RPC
   * offers it: undefined when it does not (or has no such block); any other failure is thrown.
   */
  const fromBlock = async (hash: string, only?: Set<string>): Promise<Map<string, TransactionReceipt> | undefined> => {
    if (blockReceipts === 'unsupported') return undefined
    try {
      const receipts = await reader.blockReceipts(hash as Hash, only)
      if (!receipts) return undefined
      blockReceipts = 'supported'
      return byHash(receipts)
    } catch (error) {
      if (!isMethodUnavailable(error) || blockReceipts === 'supported') throw error
      blockReceipts = 'unsupported'
      return undefined
    }
  }
  return {
    all: async (block) => (await fromBlock(block.hash)) ?? perTransaction(block.transactions.map((tx) => tx.hash)),
    // A failed read ahead is read again the usual way.
    whole: (blockHash) => fromBlock(blockHash).catch(() => undefined),
    async logged(blockHash) {
      if (blockLogs === 'unsupported') return undefined
      try {
        const logs = await reader.blockLogs(blockHash as Hash)
        blockLogs = 'supported'
        return receiptsFromLogs(blockHash, logs)
      } catch (error) {
        // An RPC that refuses a block's logs by its hash (no EIP-234) before ever giving them is not asked again.
        if (blockLogs === 'unknown' && !isTransient(error)) blockLogs = 'unsupported'
        return undefined
      }
    },
    async receipts(block, hashes) {
      if (hashes.length === 0) return new Map()
      if (hashes.length < threshold || blockReceipts === 'unsupported') return perTransaction(hashes)
      return (await fromBlock(block.hash, new Set(hashes))) ?? perTransaction(hashes)
    },
  }
}

export interface BlockEvidenceDeps {
  chain: string
  evidence: EvidenceReader
  receipts: ReceiptSource
}

const key = (sender: string, nonce: bigint | number) => `${sender.toLowerCase()}:${BigInt(nonce)}`

/**
 * Reads, for each candidate of a block, the transaction that consumed its (sender, nonce) and the
 * transaction it named, from the block's transactions and the receipts of those alone. A named
 * transaction replaced by another one is looked up by hash (it may be mined elsewhere, or nowhere).
 */
export async function readBlockEvidence(deps: BlockEvidenceDeps, block: FullBlock, candidates: Tracking[]): Promise<BlockFinding[]> {
  const byHash = new Map<string, Transaction>()
  const bySenderNonce = new Map<string, Transaction>()
  for (const tx of block.transactions) {
    byHash.set(tx.hash.toLowerCase(), tx)
    bySenderNonce.set(key(tx.from, tx.nonce), tx)
  }
  const located = candidates.map((tracking) => {
    const given = tracking.transaction ? byHash.get(tracking.transaction.toLowerCase()) : undefined
    // A nonce-less tracking's named transaction fixes its sender and nonce once seen (a given sender stays).
    const sender = tracking.sender ?? given?.from
    const nonce = tracking.nonce ?? (given ? BigInt(given.nonce) : undefined)
    let consumer = sender !== undefined && nonce !== undefined ? bySenderNonce.get(key(sender, nonce)) : undefined
    // A named transaction from another sender is judged on its own (SENDER_MISMATCH).
    if (given && given.from.toLowerCase() !== sender?.toLowerCase()) consumer = undefined
    return { tracking, given, consumer }
  })
  const needed = new Set<string>()
  for (const { given, consumer } of located) {
    if (given) needed.add(given.hash.toLowerCase())
    if (consumer) needed.add(consumer.hash.toLowerCase())
  }
  const receipts = await deps.receipts.receipts(block, [...needed])

  const mined = new Map<string, Promise<MinedTransaction>>()
  const read = (tx: Transaction, native: boolean): Promise<MinedTransaction> => {
    const id = `${tx.hash.toLowerCase()}:${native}`
    let pending = mined.get(id)
    if (!pending) {
      const receipt = receipts.get(tx.hash.toLowerCase())
      pending = receipt
        ? deps.evidence.fromFetched(tx, receipt, { native })
        : Promise.reject(new Error(`the RPC has no receipt for ${tx.hash} yet`))
      mined.set(id, pending)
    }
    return pending
  }

  return Promise.all(
    located.map(async ({ tracking, given, consumer }): Promise<BlockFinding> => {
      const judged = (consumer ?? given)!
      const native = paysNative(tracking)
      const match: TrackingMatch = {
        trackingId: tracking.id,
        chain: deps.chain,
        blockNumber: block.number,
        blockHash: block.hash.toLowerCase(),
        transaction: judged.hash.toLowerCase(),
        evidence: null,
        pendingHashes: null,
      }
      try {
        const consumerEvidence = consumer ? await read(consumer, native) : null
        let givenEvidence: MinedTransaction | null = null
        if (given) givenEvidence = given === consumer ? consumerEvidence : await read(given, native)
        else if (tracking.transaction) givenEvidence = await deps.evidence.fromHash(tracking.transaction, { native })
        match.evidence = { given: givenEvidence, consumer: consumerEvidence }
        locateVerdict(match, tracking)
        return { kind: 'found', tracking, given: givenEvidence, consumer: consumerEvidence, match }
      } catch (error) {
        if (!isRetryable(error)) return { kind: 'unreadable', tracking, error }
        match.pendingHashes = { given: tracking.transaction, consumer: consumer?.hash.toLowerCase() ?? null }
        return { kind: 'unresolved', tracking, match, error }
      }
    }),
  )
}

/**
 * A named transaction from another sender (or with another nonce) decides the verdict even when
 * it is mined in another block than the nonce's consumer: the match then points at its block, so
 * that its confirmations are counted and a reorg of that block drops the verdict in waiting.
 */
function locateVerdict(match: TrackingMatch, tracking: Tracking): void {
  const decided = match.evidence && decide(expectationOf(tracking), match.evidence)
  if (!decided || decided.tx.blockHash.toLowerCase() === match.blockHash) return
  match.blockNumber = decided.tx.blockNumber
  match.blockHash = decided.tx.blockHash.toLowerCase()
  match.transaction = decided.tx.hash.toLowerCase()
}
