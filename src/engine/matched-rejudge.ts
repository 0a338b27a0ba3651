import type { Logger } from 'pino'
import { failureFields } from '../chain/rpc-failure.ts'
import type { EvidenceReader } from '../chain/payment-evidence.ts'
import { isRetryable } from '../common/errors.ts'
import { decide, isTrace, judge, type MinedTransaction } from '../domain/judge.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { WriteFence } from '../store/chain-leases.ts'
import type { MatchStore, TrackingMatch } from '../store/tracking-matches.ts'
import type { WindowView } from './block-follower.ts'
import { expectationOf, paysNative } from './expectation.ts'
import type { CatchUpRange } from './trace-catch-up.ts'
import type { Verdicts } from './verdicts.ts'

type Matched = Awaited<ReturnType<MatchStore['matched']>>

export interface MatchedRejudge {
  /** The finalized block the matched trackings were last judged with (-1 before the first time). */
  readonly judgedFinalized: bigint
  /** Whether, at the last run, a matched tracking's verdict waited for finality (its commitment is `finalized`). */
  readonly awaitsFinality: boolean
  /**
   * Judges the trackings matched in earlier blocks again at `head` (those in `skip` were judged with
   * it already) from their stored evidence, without RPC calls; `read`: the matched trackings when read
   * already. Returns how many were matched.
   */
  run(
    head: bigint,
    finalized: bigint,
    skip: Set<string>,
    fence: WriteFence | undefined,
    window: WindowView | undefined,
    read?: Matched,
  ): Promise<number>
}

/**
 * The trackings waiting for confirmations or finality: on each block (and finality step), a match whose
 * block left the window is dropped (searched for again), one whose evidence could not be read is read by
 * hash, and the rest are judged again with the new head.
 */
export function createMatchedRejudge(deps: {
  chain: string
  matches: MatchStore
  evidence: EvidenceReader
  verdicts: Verdicts
  log: Logger
  /** Matches a trace by receiver in the blocks from `range.from` (trace-catch-up.ts); without it, a dropped trace waits for the blocks to come. */
  catchUp?: (tracking: Tracking, range: CatchUpRange) => Promise<boolean>
}): MatchedRejudge {
  const { log } = deps
  let judgedFinalized = -1n
  let awaitsFinality = false

  /**
   * The match goes and the tracking is searched for again. A trace is matched by receiver only while it
   * has no match (docs/architecture.md, "Matching by receiver"), so the blocks the follower passed while it
   * had one, from the match's own up to `head`, are matched for it now, in this block's turn: a payment
   * made while a fabricated one was held is found. When that fails, the match is put back, and the next
   * block drops it and searches again.
   */
  const searchAgain = async (tracking: Tracking, match: TrackingMatch, head: bigint, finalized: bigint, fence: WriteFence | undefined) => {
    await deps.matches.drop([tracking.id], fence)
    deps.verdicts.searchingAgain(tracking.id)
    if (!deps.catchUp || !isTrace(expectationOf(tracking))) return
    try {
      await deps.catchUp(tracking, { from: match.blockNumber, upTo: head, head, finalized, fence })
    } catch (error) {
      log.warn(
        { ...failureFields(error), tracking: tracking.id },
        'searching the blocks passed while matched failed; retrying on the next block',
      )
      await deps.matches.save(match, fence)
    }
  }

  const run: MatchedRejudge['run'] = async (head, finalized, skip, fence, window, read) => {
    const matched = read ?? (await deps.matches.matched(deps.chain))
    if (skip.size === 0) deps.verdicts.retain(new Set(matched.map((m) => m.tracking.id)))
    awaitsFinality = matched.some((m) => m.tracking.commitment === 'finalized')
    // Independent trackings: their writes go out together (the pool serves them in parallel).
    await settleAll(
      matched.map(async ({ tracking, match }) => {
        if (skip.has(tracking.id)) return
        const canonical = window?.holds(match.blockNumber, match.blockHash)
        if (canonical === false) {
          // Found on a branch the window does not hold (a reorg, or a fast-path read from another fork).
          await searchAgain(tracking, match, head, finalized, fence)
          log.info({ tracking: tracking.id, block: match.blockNumber }, 'matched block no longer canonical: searching again')
          return
        }
        let evidence = match.evidence
        let stored = true
        if (!evidence) {
          const read = await reread(tracking, match)
          if (read === 'unreadable') {
            // Retrying cannot help: the match goes, so that no later block reads it again.
            await searchAgain(tracking, match, head, finalized, fence)
            return
          }
          if (!read) return
          evidence = read
          match.evidence = evidence
          match.pendingHashes = null
          stored = false
        }
        const expectation = expectationOf(tracking)
        if (isTrace(expectation) && !evidence.pastDeadline && !decide(expectation, evidence)) {
          // A trace's found payment that the providers' agreed evidence says does not pay (a quorum
          // corrected it): not its payment after all, so the trace searches again.
          await searchAgain(tracking, match, head, finalized, fence)
          log.info({ tracking: tracking.id, transaction: match.transaction }, 'found payment does not pay after all: searching again')
          return
        }
        const judgement = judge(expectation, { ...evidence, position: { head, finalized, canonical: true } })
        await deps.verdicts.apply(tracking, expectation, judgement, match, stored, fence)
      }),
    )
    judgedFinalized = finalized
    return matched.length
  }

  /**
   * A match whose transactions could not be read when found: read them by hash now. Undefined
   * while not readable yet (retried on the next block); 'unreadable' when it never will be.
   */
  const reread = async (
    tracking: Tracking,
    match: TrackingMatch,
  ): Promise<NonNullable<TrackingMatch['evidence']> | 'unreadable' | undefined> => {
    const native = paysNative(tracking)
    const hashes = match.pendingHashes ?? { given: tracking.transaction, consumer: match.transaction }
    try {
      const consumer = hashes.consumer ? await deps.evidence.fromHash(hashes.consumer, { native }) : null
      if (hashes.consumer && !consumer) return undefined
      const given: MinedTransaction | null =
        hashes.given === hashes.consumer ? consumer : hashes.given ? await deps.evidence.fromHash(hashes.given, { native }) : null
      return { given, consumer }
    } catch (error) {
      if (!isRetryable(error)) {
        log.error({ ...failureFields(error), tracking: tracking.id }, unreadableForGood)
        return 'unreadable'
      }
      log.warn({ ...failureFields(error), tracking: tracking.id }, 'matched transaction still unreadable; retrying on the next block')
      return undefined
    }
  }

  return {
    get judgedFinalized() {
      return judgedFinalized
    },
    get awaitsFinality() {
      return awaitsFinality
    },
    run,
  }
}

/**
 * Logged once per tracking when a NonRetryableError says its evidence will never be readable: the
 * tracking stays pending (no verdict is made up from evidence the service does not have) until a
 * later block names it again (a reorg) or the time-out sweeper fails it, as before; only the
 * pointless re-read on every block is gone.
 */
export const unreadableForGood = 'payment transaction found but unreadable for good; not retried'

/** Waits for every one (none keeps running behind a failure), then throws the first failure. */
export async function settleAll<T extends readonly unknown[]>(work: T): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled = await Promise.allSettled(work)
  const failed = settled.find((result) => result.status === 'rejected')
  if (failed) throw failed.reason
  return settled.map((result) => (result as PromiseFulfilledResult<unknown>).value) as { -readonly [K in keyof T]: Awaited<T[K]> }
}
