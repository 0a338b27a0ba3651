import type { Transaction } from 'viem'
import type { FullBlock } from '../chain/chain-reader.ts'
import { RetryableChainError } from '../chain/errors.ts'
import type { EvidenceReader, FetchedReceipt } from '../chain/payment-evidence.ts'
import { erc20Transfers } from '../chain/transfers.ts'
import { decide, type MinedTransaction } from '../domain/judge.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { findTracesByReceivers } from '../store/nonceless-trackings.ts'
import type { TrackingMatch } from '../store/tracking-matches.ts'
import type { ReceiptsAhead, ReceiptSource } from './block-evidence.ts'
import { expectationOf, paysNative } from './expectation.ts'

/** A nonce-less trace's payment found in a block: judged at once, stored as its match while it waits. */
export interface ReceiverFinding {
  tracking: Tracking
  paying: MinedTransaction
  match: TrackingMatch
}

export interface ReceiverMatchDeps {
  chain: string
  db: Db
  evidence: EvidenceReader
}

/**
 * A block's receipts as matching by receiver has them: every one (`whole`), or those its logs tell
 * (`logged`). `rest`, while native traces are pending: reads the receipt of a transaction that emitted no
 * log, asked only for one that names a native trace's receiver. Without it, such transactions are no
 * candidates: a token payment is a log (docs/architecture.md, "A block's logs for its receipts").
 */
export type ReceiverReceipts = { whole: Map<string, FetchedReceipt> } | { logged: Map<string, FetchedReceipt>; rest?: ReceiptSource }

/**
 * The receipts matching by receiver reads for `block`: those read ahead, else its logs (one `eth_getLogs`
 * by its hash), else, where the RPC does not give a block's logs by hash (or gave none for a block that
 * has some), every receipt. `native`: native traces are pending, whose payment may emit no log: every
 * receipt in one request, rather than the logs and then the receipts they do not tell. A trace created
 * after this read is matched against the block by its own catch-up (trace-catch-up.ts).
 */
export async function receiverReceipts(
  source: ReceiptSource,
  block: FullBlock,
  options: { ahead?: ReceiptsAhead; native?: boolean } = {},
): Promise<ReceiverReceipts> {
  const { ahead } = options
  if (ahead && 'whole' in ahead) return ahead
  const logged = ahead ? ahead.logged : options.native ? undefined : await source.logged(block.hash)
  // A node that has the block but not (yet) its logs answers none: a payment named only by a log would go
  // unseen, so an empty answer counts only for a block whose bloom says nothing logged.
  if (logged && (logged.size > 0 || block.logsBloomEmpty === true)) return options.native ? { logged, rest: source } : { logged }
  return { whole: await source.all(block) }
}

/** Addresses a transaction may pay: its Transfer logs' recipients, its own `to`, and addresses its input or logs name. */
interface Touch {
  tx: Transaction
  receipt: FetchedReceipt
  /** Every address the transaction may have paid (lower-case). */
  addresses: Set<string>
}

/** A 32-byte word that holds an address: twelve zero bytes, then twenty that are not all zero. */
const ADDRESS_WORD = /^0{24}(?!0{40})[0-9a-f]{40}$/

/** The address-shaped words of call data or log data (routers name the receiver there). */
function addressWords(hex: string, into: Set<string>): void {
  const body = hex.startsWith('0x') ? hex.slice(2) : hex
  // Call data starts with a 4-byte selector; log data and topics do not.
  for (const offset of body.length % 64 === 8 ? [8] : [0]) {
    for (let i = offset; i + 64 <= body.length; i += 64) {
      const word = body.slice(i, i + 64).toLowerCase()
      if (ADDRESS_WORD.test(word)) into.add(`0x${word.slice(24)}`)
    }
  }
}

function touchOf(tx: Transaction, receipt: FetchedReceipt): Touch {
  const addresses = new Set<string>()
  if (receipt.status === 'success') {
    for (const transfer of erc20Transfers(receipt.logs)) addresses.add(transfer.to.toLowerCase())
    if (tx.to) addresses.add(tx.to.toLowerCase())
    // Native value forwarded by a contract reaches an address no log has to name; a router is told
    // the receiver in its call data (or names it in an event): those transactions are traced, only
    // for a receiver a pending trace expects.
    if (tx.input && tx.input !== '0x') addressWords(tx.input, addresses)
    for (const log of receipt.logs) {
      for (const topic of log.topics.slice(1)) if (topic) addressWords(topic, addresses)
      addressWords(log.data, addresses)
    }
  }
  return { tx, receipt, addresses }
}

/** A transaction the block's logs do not name, touched as if it succeeded (its `to`, its input). */
const UNTOLD = { status: 'success', logs: [] } as const

/**
 * Matching by receiver (docs/architecture.md, "Matching by receiver"): the block's receipts (its logs,
 * read by the caller) say which addresses its transactions may have paid; ONE query finds the pending
 * nonce-less traces that expect one of them; then, per account, its traces take the block's
 * transactions in their creation order: each the first transaction (in block order) that pays it in
 * full (`decide` over the candidates) and that no earlier trace of the account took, nor a nonce
 * tracking of the account consumes in this block (`claimed`: "account\nhash"). A transaction without
 * a log may have paid only the native currency, to its `to` or an address its input names: its receipt
 * (its status) is read only when a native trace expects one of those. Evidence is built from the
 * receipts; a trace of internal calls is read only for native payments, only for transactions that
 * touch the receiver. The cost follows the block's size and the traces that expect its receivers,
 * never the number of pending trackings.
 */
export async function matchReceivers(
  deps: ReceiverMatchDeps,
  block: FullBlock,
  receipts: ReceiverReceipts,
  claimed: Set<string>,
): Promise<ReceiverFinding[]> {
  const known = 'whole' in receipts ? receipts.whole : receipts.logged
  // In block order: `decide` takes the first transaction that pays. Those without a log are touched as if
  // they succeeded until their receipt says so.
  const touches: Touch[] = []
  const unlogged: Touch[] = []
  const touched = new Set<string>()
  for (const tx of block.transactions) {
    const receipt = known.get(tx.hash.toLowerCase())
    if (!receipt && 'whole' in receipts) {
      throw new RetryableChainError(`the RPC has no receipt for ${tx.hash} of block ${block.number} yet`)
    }
    // Without a native trace pending, a transaction without a log pays no trace: its addresses are not even
    // looked up (most of a busy block's transactions, for a query that costs per address).
    if (!receipt && !('whole' in receipts) && !receipts.rest) continue
    const touch = touchOf(tx, receipt ?? { ...UNTOLD, transactionHash: tx.hash, blockNumber: block.number, blockHash: block.hash })
    // A reverted transaction touches nothing: it is no candidate (and fails no trace).
    if (touch.addresses.size === 0) continue
    touches.push(touch)
    if (!receipt) unlogged.push(touch)
    for (const address of touch.addresses) touched.add(address)
  }
  if (touched.size === 0) return []
  const traces = await findTracesByReceivers(deps.db, deps.chain, [...touched], block)
  if (traces.length === 0) return []
  const rest = 'logged' in receipts ? receipts.rest : undefined
  const payers = rest && unlogged.length > 0 ? await readUnlogged(rest, block, traces, touches, unlogged) : touches

  const mined = new Map<string, Promise<MinedTransaction>>()
  const evidenceOf = (touch: Touch, native: boolean): Promise<MinedTransaction> => {
    const id = `${touch.tx.hash.toLowerCase()}:${native}`
    let read = mined.get(id)
    if (!read) {
      read = deps.evidence.fromFetched(touch.tx, touch.receipt, { native }).then((tx) => ({ ...tx, blockTimestamp: block.timestamp }))
      mined.set(id, read)
    }
    return read
  }

  const findings: ReceiverFinding[] = []
  // Oldest first (the query's order): an account's earlier trace takes a transaction before its later ones.
  for (const tracking of traces) {
    const receiver = tracking.receiver.toLowerCase()
    const native = paysNative(tracking)
    const open = payers.filter((t) => t.addresses.has(receiver) && !claimed.has(`${tracking.accountId}\n${t.tx.hash.toLowerCase()}`))
    if (open.length === 0) continue
    const candidates = await Promise.all(open.map((touch) => evidenceOf(touch, native)))
    const decided = decide(expectationOf(tracking), { given: null, consumer: null, candidates })
    if (!decided || decided.reason !== null) continue
    const paying = decided.tx
    claimed.add(`${tracking.accountId}\n${paying.hash}`)
    findings.push({
      tracking,
      paying,
      match: {
        trackingId: tracking.id,
        chain: deps.chain,
        blockNumber: block.number,
        blockHash: block.hash.toLowerCase(),
        transaction: paying.hash,
        evidence: { given: null, consumer: paying },
        pendingHashes: null,
      },
    })
  }
  return findings
}

/**
 * The block's touches once the transactions without a log that name a receiver of a native trace have
 * their receipts (one read): one that reverted touches nothing. A token payment is a Transfer log, so a
 * transaction without a log pays no token trace; one that names no native trace's receiver is no candidate
 * of any trace. Both leave.
 */
async function readUnlogged(
  rest: ReceiptSource,
  block: FullBlock,
  traces: Tracking[],
  touches: Touch[],
  unlogged: Touch[],
): Promise<Touch[]> {
  const expected = new Set(traces.filter(paysNative).map((t) => t.receiver.toLowerCase()))
  const needed = unlogged.filter((touch) => [...touch.addresses].some((address) => expected.has(address)))
  const read =
    needed.length > 0
      ? await rest.receipts(
          block,
          needed.map((touch) => touch.tx.hash.toLowerCase()),
        )
      : new Map()
  const told = new Map<Touch, Touch>()
  for (const touch of needed) {
    const receipt = read.get(touch.tx.hash.toLowerCase())
    if (!receipt) throw new RetryableChainError(`the RPC has no receipt for ${touch.tx.hash} of block ${block.number} yet`)
    told.set(touch, touchOf(touch.tx, receipt))
  }
  const untold = new Set(unlogged)
  return touches.flatMap((touch) => {
    if (!untold.has(touch)) return [touch]
    const real = told.get(touch)
    return real && real.addresses.size > 0 ? [real] : []
  })
}

/** The accounts' claims on a block's transactions by their nonce trackings (sender+nonce or named hash). */
export function claimsOf(block: FullBlock, nonceCandidates: readonly Tracking[]): Set<string> {
  const claimed = new Set<string>()
  if (nonceCandidates.length === 0) return claimed
  const bySenderNonce = new Map<string, string>()
  for (const tx of block.transactions) bySenderNonce.set(`${tx.from.toLowerCase()}:${BigInt(tx.nonce)}`, tx.hash.toLowerCase())
  for (const t of nonceCandidates) {
    if (t.transaction) claimed.add(`${t.accountId}\n${t.transaction.toLowerCase()}`)
    const hash = t.sender !== null && t.nonce !== null ? bySenderNonce.get(`${t.sender.toLowerCase()}:${t.nonce}`) : undefined
    if (hash) claimed.add(`${t.accountId}\n${hash}`)
  }
  return claimed
}
