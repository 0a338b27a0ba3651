import type { Address } from 'viem'
import type { ChainReader, FullBlock } from '../chain/chain-reader.ts'
import { RetryableChainError } from '../chain/errors.ts'
import type { EvidenceReader } from '../chain/payment-evidence.ts'
import { judge, type ChainPosition } from '../domain/judge.ts'
import type { BlockHeader } from '../domain/block-window.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { WriteFence } from '../store/chain-leases.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { findClaimedTransactions } from '../store/nonceless-trackings.ts'
import type { TrackingMatch } from '../store/tracking-matches.ts'
import type { ReceiptSource } from './block-evidence.ts'
import { expectationOf, paysNative } from './expectation.ts'
import { matchReceivers, receiverReceipts, type ReceiverReceipts } from './receiver-match.ts'
import type { Verdicts } from './verdicts.ts'

export interface TraceCatchUpDeps {
  chain: string
  db: Db
  reader: ChainReader
  evidence: EvidenceReader
  receipts: ReceiptSource
  verdicts: Verdicts
  /** Most blocks read one by one in one call (a block and its logs, or its receipts for a native trace, each). */
  maxBlocks?: number
}

/**
 * How a catch-up ended: whether it judged the trace (a payment or the deadline found) and, when it stopped
 * short of its range (the most blocks one turn reads or searches), the first block it did not look at.
 */
export interface CatchUpOutcome {
  judged: boolean
  next?: bigint
}

/** The blocks a catch-up reads, from `from` up to `upTo` (later ones are the follower's), and the chain's position. */
export interface CatchUpRange {
  from: bigint
  upTo: bigint
  head: bigint
  finalized: bigint
  /** The lease the follower writes under, when the catch-up runs in a block's turn. */
  fence?: WriteFence
}

/**
 * Most blocks a trace's catch-up searches in one call (`transferBlocks` or `nativeValueBlocks`, 2,000 a
 * request): 50 requests in one turn of the follower at most; the rest are left to the next call.
 */
const MAX_SEARCH_BLOCKS = 100_000n

/**
 * The newest blocks of a searched range, read one by one (a block, then its logs by the block's hash, or its
 * receipts), and so a range of at most this many. Older blocks are searched: one request per 2,000 blocks,
 * then the paying block's two, where reading them one by one is two requests a block, all in the follower's
 * turn (20 blocks are 5 s on Arbitrum). The newest are where a trace created soon after its payment is paid,
 * and where a provider's node that lags behind (one of many behind a load balancer) answers a range without
 * them; asked by hash, it knows no such block (receiver-match.ts).
 */
const TAIL_BLOCKS = 4n

/**
 * A nonce-less trace matched by receiver in blocks the follower passed without it: those blocks are
 * matched for it now, oldest first. That is a trace created after the follower passed its `after_block`
 * (the widget creates its tracking within a few blocks of paying; a checkout paid from any wallet may
 * register it when the payer says they paid), and a trace whose found payment was dropped (the blocks
 * passed while it was matched). The blocks but the newest few are searched for what can pay the trace: a
 * token trace's, the blocks holding a `Transfer` of its token to its receiver (a token payment is such a
 * log); a native trace's, the blocks where a call moved native value to its receiver (`trace_filter`, where
 * the RPC offers it). Those blocks, and the first block past its deadline, are the only ones that can decide
 * it. Where the RPC offers no search of native value, a native trace's blocks are read one by one, up to
 * `maxBlocks` of them in one call, and the rest are left to the next (`next`): its payment may emit no log.
 * RPC failures throw, for the caller to try again.
 */
export async function catchUpTrace(deps: TraceCatchUpDeps, tracking: Tracking, range: CatchUpRange): Promise<CatchUpOutcome> {
  const native = paysNative(tracking)
  if (range.upTo - range.from < TAIL_BLOCKS) return readInOrder(deps, tracking, range, native)
  const tailFrom = range.upTo - TAIL_BLOCKS + 1n
  // Past the most a search covers, the blocks after it (the tail too) are left to the next call.
  const capped = tailFrom - range.from > MAX_SEARCH_BLOCKS
  const older = { ...range, upTo: capped ? range.from + MAX_SEARCH_BLOCKS - 1n : tailFrom - 1n }
  const found = await searchPayments(deps, tracking, older, native)
  if (found === undefined) return readInOrder(deps, tracking, range, native)
  if (found) return { judged: true }
  return capped ? { judged: false, next: older.upTo + 1n } : readInOrder(deps, tracking, { ...range, from: tailFrom }, native)
}

/** Blocks matched one by one in chain order, up to `maxBlocks` of them. */
async function readInOrder(deps: TraceCatchUpDeps, tracking: Tracking, range: CatchUpRange, native: boolean): Promise<CatchUpOutcome> {
  const { from, upTo } = range
  const last = from + BigInt(deps.maxBlocks ?? 64) - 1n
  const end = upTo < last ? upTo : last
  // Blocks are matched in order, but read ahead: the turn waits for one round trip per READ_AHEAD blocks.
  const reads = new Map<bigint, Promise<BlockRead>>()
  for (let number = from; number <= end; number++) {
    for (let next = number; next < number + READ_AHEAD && next <= end; next++) {
      if (reads.has(next)) continue
      const read = readBlock(deps, next, native)
      read.catch(() => {}) // awaited in its turn; the reads past a payment, the deadline or an error are dropped
      reads.set(next, read)
    }
    const { block, receipts } = await reads.get(number)!
    reads.delete(number)
    if (tracking.deadline !== null && block.timestamp > tracking.deadline) return { judged: await timeOut(deps, tracking, block, range) }
    if (await paidIn(deps, tracking, block, range, receipts)) return { judged: true }
  }
  return end < upTo ? { judged: false, next: end + 1n } : { judged: false }
}

/**
 * Blocks a one-by-one catch-up reads ahead of the one it matches (a block, then its logs or receipts). A
 * native trace 20 blocks behind was 40 requests one after the other, all in the follower's turn.
 */
const READ_AHEAD = 8n

/** A block and, when it has transactions, the receipts matching by receiver reads for it (in flight). */
interface BlockRead {
  block: FullBlock
  receipts?: Promise<ReceiverReceipts>
}

async function readBlock(deps: TraceCatchUpDeps, number: bigint, native: boolean): Promise<BlockRead> {
  const block = await blockAt(deps.reader, number)
  if (block.transactions.length === 0) return { block }
  const receipts = receiverReceipts(deps.receipts, block, { native })
  receipts.catch(() => {}) // awaited by `paidIn`, unless the read is dropped
  return { block, receipts }
}

/**
 * A trace's range searched: the blocks that may pay it, in chain order, up to the first block past its
 * deadline. Undefined when the RPC offers no such search (`trace_filter`, for a native trace).
 */
async function searchPayments(
  deps: TraceCatchUpDeps,
  tracking: Tracking,
  range: CatchUpRange,
  native: boolean,
): Promise<boolean | undefined> {
  const { from, upTo } = range
  const receiver = tracking.receiver as Address
  const candidates = native
    ? await deps.reader.nativeValueBlocks(receiver, from, upTo)
    : await deps.reader.transferBlocks(tracking.token as Address, receiver, from, upTo)
  if (candidates === null) return undefined
  const pastDeadline = tracking.deadline === null ? undefined : await firstPast(deps.reader, from, upTo, tracking.deadline)
  for (const number of candidates) {
    if (pastDeadline && number >= pastDeadline.number) break
    if (await paidIn(deps, tracking, await blockAt(deps.reader, number), range)) return true
  }
  return pastDeadline ? timeOut(deps, tracking, pastDeadline, range) : false
}

/** The first block from `from` to `upTo` whose timestamp is past `deadline` (binary search on headers), if any. */
async function firstPast(reader: ChainReader, from: bigint, upTo: bigint, deadline: bigint): Promise<BlockHeader | undefined> {
  const last = await headerAt(reader, upTo)
  if (last.timestamp <= deadline) return undefined
  let [low, high] = [from, upTo]
  while (low < high) {
    const middle = (low + high) / 2n
    if ((await headerAt(reader, middle)).timestamp > deadline) high = middle
    else low = middle + 1n
  }
  // Its header is all the time-out rests on (number and hash).
  return low === upTo ? last : headerAt(reader, low)
}

// The follower passed these blocks, so the chain has them: a provider behind them is asked again later.
async function blockAt(reader: ChainReader, number: bigint): Promise<FullBlock> {
  const block = await reader.block(number)
  if (!block) throw new RetryableChainError(`the RPC does not have block ${number} yet`)
  return block
}

async function headerAt(reader: ChainReader, number: bigint): Promise<BlockHeader> {
  const header = await reader.header(number)
  if (!header) throw new RetryableChainError(`the RPC does not have block ${number} yet`)
  return header
}

/** Where the chain stands for the catch-up's verdicts: the blocks it reads are ones the follower passed. */
const positionOf = (range: CatchUpRange): ChainPosition => ({ head: range.head, finalized: range.finalized, canonical: true })

async function timeOut(deps: TraceCatchUpDeps, tracking: Tracking, block: BlockHeader, range: CatchUpRange): Promise<true> {
  await judgeTimedOut(deps, tracking, block, positionOf(range), range.fence)
  return true
}

/**
 * `block` is the first past the trace's deadline: it is stored as the trace's match (a reorg of it drops the
 * match: searched again), and the judge fails the trace TRACKING_TIMED_OUT once the block has its commitment.
 */
export async function judgeTimedOut(
  deps: { chain: string; verdicts: Verdicts },
  tracking: Tracking,
  block: { number: bigint; hash: string },
  position: ChainPosition,
  fence: WriteFence | undefined,
): Promise<void> {
  const expectation = expectationOf(tracking)
  const pastDeadline = { blockNumber: block.number }
  const judgement = judge(expectation, { given: null, consumer: null, pastDeadline, position })
  const match: TrackingMatch = {
    trackingId: tracking.id,
    chain: deps.chain,
    blockNumber: block.number,
    blockHash: block.hash.toLowerCase(),
    transaction: '',
    evidence: { given: null, consumer: null, pastDeadline },
    pendingHashes: null,
  }
  await deps.verdicts.apply(tracking, expectation, judgement, match, false, fence)
}

/** Whether `block` pays the trace (then judged): its transactions no other tracking of the account claims. */
async function paidIn(
  deps: TraceCatchUpDeps,
  tracking: Tracking,
  block: FullBlock,
  range: CatchUpRange,
  readAhead?: Promise<ReceiverReceipts>,
): Promise<boolean> {
  if (block.transactions.length === 0) return false
  const receipts = await (readAhead ?? receiverReceipts(deps.receipts, block, { native: paysNative(tracking) }))
  const taken = await findClaimedTransactions(
    deps.db,
    tracking.accountId,
    deps.chain,
    block.transactions.map((tx) => tx.hash),
  )
  const claimed = new Set([...taken].map((hash) => `${tracking.accountId}\n${hash}`))
  const findings = await matchReceivers(deps, block, receipts, claimed)
  const mine = findings.find((f) => f.tracking.id === tracking.id)
  if (!mine) return false
  const expectation = expectationOf(tracking)
  const judgement = judge(expectation, { given: null, consumer: mine.paying, position: positionOf(range) })
  await deps.verdicts.apply(tracking, expectation, judgement, mine.match, false, range.fence)
  return true
}
