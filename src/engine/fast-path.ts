import type { Address, Hash } from 'viem'
import type { ChainReader } from '../chain/chain-reader.ts'
import { RetryableChainError } from '../chain/errors.ts'
import type { Finality } from '../chain/finality.ts'
import type { EvidenceReader } from '../chain/payment-evidence.ts'
import { judge, minedPastDeadline, type MinedTransaction } from '../domain/judge.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { TrackingMatch } from '../store/tracking-matches.ts'
import { expectationOf, paysNative } from './expectation.ts'
import { locateConsumer, type LocateOptions } from './locate-consumer.ts'
import type { Verdicts } from './verdicts.ts'

export interface FastPathDeps {
  chain: string
  reader: ChainReader
  evidence: EvidenceReader
  finality: Finality
  verdicts: Verdicts
  /** The newest block this node's follower processed, when it follows the chain. */
  followerHead(): bigint | undefined
  /**
   * The newest head this node's follower learned of (every block it reads payments of is at or below
   * it), when it follows the chain: the block the sieve counts at, without asking for the latest.
   */
  seenHead?(): bigint | undefined
  /**
   * Resolves true once this node's follower processed a block at or above `number`; false when its syncs
   * ended short of it, or it does not follow the chain (block-follower.ts `reached`).
   */
  followerReached?(number: bigint): Promise<boolean>
  /** Runs the final step in turn with the follower's block handling, when this node follows the chain. */
  exclusive<T>(work: () => Promise<T>): Promise<T>
  locate?: LocateOptions
  /**
   * A nonce-less tracking's named transaction was seen: its sender and nonce become the tracking's
   * (the updated tracking; undefined when they could not be, see fillIdentity).
   */
  fillIdentity?: (tracking: Tracking, sender: string, nonce: bigint) => Promise<Tracking | undefined>
  /**
   * A nonce-less trace: blocks the follower passed before it existed, matched by receiver from `range.from`
   * (trace-catch-up.ts); whether it judged the trace.
   */
  catchUp?: (tracking: Tracking, range: { from: bigint; upTo: bigint; head: bigint; finalized: bigint }) => Promise<boolean>
  /** A new nonce-less trace: the search owed to it, run now (trace-searches.ts, which calls `searchPassedBlocks`). */
  searchTrace?: (tracking: Tracking) => Promise<FastPathResult>
  /**
   * The transaction counts of many senders at one block, in one JSON-RPC batch (null where that call
   * failed); without it every new tracking is checked on its own.
   */
  transactionCounts?(senders: Address[], block: bigint): Promise<(bigint | null)[]>
}

export type FastPathResult = 'judged' | 'waiting'

/**
 * Checks a tracking as soon as it is created (or gets its transaction), without waiting for the
 * next block, so that a payment mined before it was registered is still found: a named transaction
 * is read by hash; otherwise (or when it was replaced) the sender's transaction count says whether
 * the nonce was consumed, and if so where (see locate-consumer.ts). Nothing mined yet: the blocks
 * to come will find it. RPC failures throw (retryable): the caller tries again later.
 */
export async function checkNewTracking(deps: FastPathDeps, tracking: Tracking): Promise<FastPathResult> {
  if (tracking.nonce === null && !tracking.transaction) return deps.searchTrace ? deps.searchTrace(tracking) : 'waiting'
  const head = await latestNotBehind(deps)
  if (tracking.nonce === null) {
    // A named transaction, once seen (pending or mined), fixes the sender and nonce: the block that
    // consumes that nonce then finds it, also when the transaction is replaced.
    const seen = await deps.reader.transaction(tracking.transaction as Hash)
    if (seen && deps.fillIdentity) tracking = (await deps.fillIdentity(tracking, seen.from.toLowerCase(), BigInt(seen.nonce))) ?? tracking
  }
  const native = paysNative(tracking)
  const sender = tracking.sender?.toLowerCase() ?? null
  const given = tracking.transaction ? await deps.evidence.fromHash(tracking.transaction, { native }) : null
  let consumer: MinedTransaction | null = null
  if (given && given.from === (sender ?? given.from) && given.nonce === (tracking.nonce ?? given.nonce)) {
    consumer = given
  } else if (!given && sender !== null && tracking.nonce !== null) {
    // A trace, or a named transaction that is not mined (yet, or ever: replaced).
    const located = await locateConsumer(deps.reader, sender as Address, tracking.nonce, tracking.afterBlock, head, deps.locate)
    if (located) {
      const receipt = await deps.reader.receipt(located.tx.hash as Hash)
      if (!receipt) throw new RetryableChainError(`the RPC has no receipt for ${located.tx.hash} yet`)
      consumer = await deps.evidence.fromFetched(located.tx, receipt, { native })
    }
  }
  const judged = consumer ?? given
  if (!judged) return 'waiting'
  const expectation = expectationOf(tracking)
  if (expectation.deadline != null) {
    // Mined past the deadline of a payment without a nonce, it is not the payment: no match, so that the
    // follower's next block, past the deadline too, times the tracking out.
    const header = await deps.reader.headerByHash(judged.blockHash as Hash)
    if (!header) throw new RetryableChainError(`the RPC has no block ${judged.blockHash} yet`)
    if (minedPastDeadline(expectation, { ...judged, blockTimestamp: header.timestamp })) return 'waiting'
  }

  const finalized = (await deps.finality.at(head)) ?? 0n
  const judgement = judge(expectation, { given, consumer, position: { head, finalized, canonical: true } })
  const match: TrackingMatch = {
    trackingId: tracking.id,
    chain: deps.chain,
    blockNumber: judged.blockNumber,
    blockHash: judged.blockHash,
    transaction: judged.hash,
    evidence: { given, consumer },
    pendingHashes: null,
  }
  await deps.exclusive(() => deps.verdicts.apply(tracking, expectation, judgement, match, false))
  return 'judged'
}

/**
 * A trace (no nonce, no transaction) is found by receiver: by the blocks to come, and by a catch-up over
 * the blocks from `from` (after its `after_block`) this node's follower read before it was stored. A node
 * that does not follow the chain leaves them to the one that does (undefined): the search stays owed
 * (trace-searches.ts). A block's pending trackings are read at its notification, before the block is
 * processed (block-reads.ts): every block read so before the trace was stored is at or below the head the
 * follower has seen now, and those above it will know the trace. So the catch-up waits until the follower
 * processed that head (a block read without the trace could otherwise be processed after the catch-up had
 * looked), then runs up to it, in turn with the follower. Whether it judged the trace.
 */
export async function searchPassedBlocks(deps: FastPathDeps, tracking: Tracking, from: bigint): Promise<boolean | undefined> {
  const seen = deps.seenHead?.() ?? deps.followerHead()
  if (!deps.catchUp || seen === undefined) return undefined
  if (seen < from) return false
  if (deps.followerReached && !(await deps.followerReached(seen))) {
    throw new RetryableChainError(`the follower has not processed block ${seen}, which it had seen, yet`)
  }
  const head = await latestNotBehind(deps)
  const finalized = (await deps.finality.at(head)) ?? 0n
  return deps.exclusive(() => deps.catchUp!(tracking, { from, upTo: seen, head, finalized }))
}

/**
 * Transaction counts asked in one HTTP request at most: providers cap their JSON-RPC batches (Alchemy
 * at 1,000 calls).
 */
const COUNTS_PER_REQUEST = 1_000

/**
 * Sorts out, in one request per thousand new trackings, those whose payment cannot have been mined
 * yet: no named transaction, and the sender's transaction count says the nonce is unused at the
 * follower's newest head (or, when this node does not follow the chain, at the latest block, one
 * request more). The blocks after that head will find those: they are read after it was learned of,
 * so after the trackings were stored. The others (returned) are checked one by one by `checkNewTracking`.
 * A burst of 100,000 creates was 200,000 requests (head and count per tracking, 8 at a time).
 */
export async function sieveNewTrackings(deps: FastPathDeps, trackings: Tracking[]): Promise<Tracking[]> {
  // A nonce-less trace has no nonce to count against: it goes on to be checked on its own.
  const countable = trackings.filter(
    (t): t is Tracking & { sender: string; nonce: bigint } => !t.transaction && t.sender != null && t.nonce != null,
  )
  if (!deps.transactionCounts || countable.length < 2) return trackings
  const counting = deps.transactionCounts.bind(deps)
  const head = deps.seenHead?.() ?? (await latestNotBehind(deps))
  const senders = [...new Set(countable.map((t) => t.sender.toLowerCase()))] as Address[]
  const chunks = Array.from({ length: Math.ceil(senders.length / COUNTS_PER_REQUEST) }, (_, i) =>
    senders.slice(i * COUNTS_PER_REQUEST, (i + 1) * COUNTS_PER_REQUEST),
  )
  const counts = (await Promise.all(chunks.map((chunk) => counting(chunk, head)))).flat()
  const countOf = new Map(senders.map((sender, i) => [sender, counts[i] ?? null]))
  const unused = new Set<Tracking>(
    countable.filter((t) => {
      const count = countOf.get(t.sender.toLowerCase() as Address)
      return count != null && count <= t.nonce
    }),
  )
  return trackings.filter((t) => !unused.has(t))
}

/**
 * The RPC's latest block, refused while it is behind the newest head the follower learned of or processed (a
 * lagging RPC after a failover, or one behind the `newHeads` announcement): it could say "not mined yet" or
 * "unused" of what such a block holds, and that block's own reads may have been made before the tracking
 * was stored.
 */
async function latestNotBehind(deps: FastPathDeps): Promise<bigint> {
  const head = await deps.reader.header('latest')
  if (!head) throw new RetryableChainError('the RPC returned no latest block')
  const [followed, seen] = [deps.followerHead(), deps.seenHead?.()]
  const floor = seen !== undefined && (followed === undefined || seen > followed) ? seen : followed
  if (floor !== undefined && head.number < floor) {
    throw new RetryableChainError(`the RPC head ${head.number} is behind block ${floor}, which the follower has seen`)
  }
  return head.number
}
