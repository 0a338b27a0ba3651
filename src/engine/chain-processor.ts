import type { Logger } from 'pino'
import type { FollowerEvent, WindowView } from './block-follower.ts'
import type { FullBlock } from '../chain/chain-reader.ts'
import type { Finality } from '../chain/finality.ts'
import type { BlockHeader } from '../domain/block-window.ts'
import type { EvidenceReader } from '../chain/payment-evidence.ts'
import { judge } from '../domain/judge.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { WriteFence } from '../store/chain-leases.ts'
import { failureFields } from '../chain/rpc-failure.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { createMatchStore, type MatchStore } from '../store/tracking-matches.ts'
import { findPastDeadline } from '../store/nonceless-trackings.ts'
import { createBlockReads, type AroundReads } from './block-reads.ts'
import { readBlockEvidence, receiptsAhead, type ReceiptSource } from './block-evidence.ts'
import { claimsOf, matchReceivers, receiverReceipts, type ReceiverFinding } from './receiver-match.ts'
import type { EngineMetrics } from './engine-metrics.ts'
import { expectationOf } from './expectation.ts'
import type { SuccessWatcher } from './success-watch.ts'
import type { Verdicts } from './verdicts.ts'
import { createMatchedRejudge, settleAll, unreadableForGood } from './matched-rejudge.ts'
import { judgeTimedOut, type CatchUpRange } from './trace-catch-up.ts'

export interface ChainProcessorDeps {
  chain: string
  db: Db
  /** Searches the blocks passed while a trace's dropped match was held (trace-catch-up.ts); without it, only the blocks to come. */
  catchUpTrace?: (tracking: Tracking, range: CatchUpRange) => Promise<boolean>
  evidence: EvidenceReader
  receipts: ReceiptSource
  /** The matches it re-judges and writes (default: the database's, `createMatchStore`). */
  matches?: MatchStore
  verdicts: Verdicts
  /** Successes whose block is not final yet, checked on each block and reorg. */
  successes: SuccessWatcher
  /**
   * The finalized block read now. The follower reads it only every few heads while no found payment waits
   * for it (finality-cadence.ts): a block whose own payments have the `finalized` commitment reads it afresh,
   * so that their first judgement (and the confirmations the widget shows) is as with a read per block.
   */
  finality?: Finality
  metrics: EngineMetrics
  logger: Logger
  clock: () => Date
  /** Told after each block (benchmarks, diagnostics). */
  onBlockProcessed?: (info: BlockProcessed) => void
  /** The quorum's reads of a block that may carry payments, started with its own (evidence-quorum.ts). */
  prepareQuorum?: (blockHash: string) => void
}

export interface BlockProcessed {
  chain: string
  number: bigint
  transactions: number
  /** Pending trackings whose sender+nonce or hash appear in the block. */
  candidates: number
  /** Trackings already matched and re-judged with this block. */
  rejudged: number
  ms: number
}

export interface ChainProcessor {
  /** `fence`: the lease this node follows the chain under; every write of the event is made under it. */
  /** `window`: the follower's, in which the event happened (which matched blocks are still canonical). */
  handle(event: FollowerEvent, fence?: WriteFence, window?: WindowView): Promise<'recorded' | void>
  /** The next block's header is known before the block is read: its reads start now (block-reads.ts). */
  prepare(header: BlockHeader): void
  /** Whether a matched tracking's verdict waits for finality (a `finalized` commitment), as of the last block. */
  awaitsFinality(): boolean
}

/**
 * Turns the follower's events into judgements. Per block, the work is constant in the number of
 * pending trackings: one indexed query for the trackings whose (sender, nonce) or hash appear in
 * the block, receipts for those alone, and one query for the trackings already matched (waiting
 * for confirmations), which are re-judged from their stored evidence without RPC calls. A block runs
 * in two rounds, each written at its end: its own payments first (their callbacks go as that write
 * commits), then the follow-up of matched trackings and watched successes, with the block record. While
 * nonce-less traces are pending: the block's logs in one request, one query for the traces expecting
 * the receivers it touched, one for the traces whose deadline it passes (docs/architecture.md,
 * "Matching by receiver").
 */
export function createChainProcessor(deps: ChainProcessorDeps): ChainProcessor {
  const log = deps.logger.child({ chain: deps.chain })
  const matches = deps.matches ?? createMatchStore(deps.db, deps.clock)
  const rejudge = createMatchedRejudge({
    chain: deps.chain,
    matches,
    evidence: deps.evidence,
    verdicts: deps.verdicts,
    log,
    catchUp: deps.catchUpTrace,
  })
  const judgeCandidates = async (
    block: FullBlock,
    finalized: bigint,
    candidates: Tracking[],
    fence: WriteFence | undefined,
    receipts: ReceiptSource,
  ) => {
    if (candidates.length === 0) return
    const findings = await readBlockEvidence({ chain: deps.chain, evidence: deps.evidence, receipts }, block, candidates)
    await settleAll(
      findings.map(async (finding) => {
        const blockLog = log.child({ block: block.number, tracking: finding.tracking.id })
        if (finding.kind === 'unreadable') {
          blockLog.error(failureFields(finding.error), unreadableForGood)
          return
        }
        if (finding.kind === 'unresolved') {
          blockLog.warn(failureFields(finding.error), 'payment transaction found but unreadable; retrying on the next block')
          await matches.save(finding.match, fence)
          return
        }
        const expectation = expectationOf(finding.tracking)
        const judgement = judge(expectation, {
          given: finding.given,
          consumer: finding.consumer,
          position: { head: block.number, finalized, canonical: true },
        })
        blockLog.debug({ judgement: judgement.status, transaction: finding.match.transaction }, 'payment transaction found')
        await deps.verdicts.apply(finding.tracking, expectation, judgement, finding.match, false, fence)
      }),
    )
  }

  /**
   * Nonce-less traces (docs/api.md, "Payments without a nonce"): the payments found by receiver in
   * this block, and the traces whose deadline this block is the first to pass (they fail
   * TRACKING_TIMED_OUT once this block has their commitment; the block is stored as their match, so
   * that a reorg of it searches again).
   */
  const judgeTraces = async (
    block: FullBlock,
    finalized: bigint,
    found: ReceiverFinding[],
    pastDeadline: Tracking[],
    fence: WriteFence | undefined,
  ) => {
    const position = { head: block.number, finalized, canonical: true }
    await settleAll([
      ...found.map(async ({ tracking, paying, match }) => {
        const expectation = expectationOf(tracking)
        const judgement = judge(expectation, { given: null, consumer: paying, position })
        log.debug(
          { block: block.number, tracking: tracking.id, judgement: judgement.status, transaction: paying.hash },
          'payment found by receiver',
        )
        await deps.verdicts.apply(tracking, expectation, judgement, match, false, fence)
      }),
      ...pastDeadline.map((tracking) => judgeTimedOut(deps, tracking, block, position, fence)),
    ])
  }

  /** `finalized` as the follower gave it, or read afresh when one of `judged` waits for finality (never lower). */
  const finalizedFor = async (block: FullBlock, finalized: bigint, judged: Tracking[]): Promise<bigint> => {
    if (!deps.finality || !judged.some((tracking) => tracking.commitment === 'finalized')) return finalized
    const fresh = await deps.finality.at(block.number)
    if (fresh === undefined || fresh <= finalized) return finalized
    return fresh < block.number ? fresh : block.number
  }

  const reads = createBlockReads({
    chain: deps.chain,
    db: deps.db,
    matches,
    receipts: deps.receipts,
    successes: deps.successes,
    alsoAhead: deps.prepareQuorum,
  })

  /**
   * A block's own payments: the trackings whose (sender, nonce) or hash it holds, those it pays by receiver
   * (with nonce-less traces pending), and those without a nonce whose deadline it passes. Judged and written
   * first, so that their callbacks wait for nothing else (the follow-up below comes after).
   */
  const payingLane = async (block: FullBlock, finalized: bigint, latest: boolean, fence: WriteFence | undefined) => {
    const { receipts: ahead } = reads.start(block, latest)
    const { candidates, pending } = await reads.candidates(block)
    const read = await ahead
    // Read ahead: the block's logs, or its receipts while native traces are pending (block-reads.ts): they serve
    // matching by receiver and every nonce tracking's payment of the block alike (no receipt request per payment).
    let receipts = read ? receiptsAhead(read, deps.receipts) : deps.receipts
    const matching = async (): Promise<ReceiverFinding[]> => {
      // An empty block pays nothing: no receipts to read.
      if (!pending.traces || block.transactions.length === 0) return []
      const given = await receiverReceipts(deps.receipts, block, { ahead: read, native: pending.nativeTraces })
      // The block's nonce trackings read their payments from the same answer.
      receipts = receiptsAhead(given, deps.receipts)
      return matchReceivers({ chain: deps.chain, db: deps.db, evidence: deps.evidence }, block, given, claimsOf(block, candidates))
    }
    const [found, pastDeadline] = await Promise.all([
      matching(),
      pending.pastDeadline ? findPastDeadline(deps.db, deps.chain, block.timestamp) : ([] as Tracking[]),
    ])
    finalized = await finalizedFor(block, finalized, [...candidates, ...found.map((f) => f.tracking), ...pastDeadline])
    // The block's own candidates and its traces' payments are distinct sets: judged together.
    await settleAll([
      judgeCandidates(block, finalized, candidates, fence, receipts),
      judgeTraces(block, finalized, found, pastDeadline, fence),
    ] as const)
    return { judged: [...candidates, ...found.map((f) => f.tracking), ...pastDeadline].map((t) => t.id) }
  }

  /**
   * After the block's own verdicts are written: the trackings matched in earlier blocks, judged again
   * from their stored evidence (those judged with this block already are skipped), and the watched
   * successes checked against it. The block is recorded as processed with these writes. `readEarlier`:
   * the same reads, started beside the block's own (a block caught up on).
   */
  const followUpLane = async (
    block: FullBlock,
    finalized: bigint,
    judged: Set<string>,
    fence: WriteFence | undefined,
    window: WindowView | undefined,
    readEarlier: Promise<AroundReads> | undefined,
  ): Promise<number> => {
    const { matched, watched } = await (readEarlier ?? reads.around(block, finalized, window))
    const [rejudged] = await settleAll([
      rejudge.run(block.number, finalized, judged, fence, window, matched),
      deps.successes.check(watched, block, finalized, fence, window),
    ] as const)
    deps.metrics.head(deps.chain, block.number, block.timestamp)
    return rejudged
  }

  /** A reorg or a finalize event (a block takes the two lanes above). */
  const handleOther = async (
    event: Exclude<FollowerEvent, { type: 'block' }>,
    fence: WriteFence | undefined,
    window: WindowView | undefined,
  ): Promise<void> => {
    switch (event.type) {
      case 'reorg': {
        const dropped = await matches.dropAbove(deps.chain, event.ancestor, fence)
        for (const id of dropped) deps.verdicts.searchingAgain(id)
        await deps.successes.reorg(event.ancestor, fence)
        deps.metrics.reorg(deps.chain, event.removed.length)
        if (dropped.length > 0)
          log.info({ ancestor: event.ancestor, trackings: dropped }, 'reorg dropped matched transactions: searching again')
        return
      }
      case 'finalize':
        deps.metrics.finalized(deps.chain, event.finalized)
        // Blocks already carried this finalized number, unless none arrived since it advanced.
        if (event.finalized > rejudge.judgedFinalized) await rejudge.run(event.head, event.finalized, new Set(), fence, window)
        return
    }
  }

  return {
    prepare: (header) => reads.prepare(header),
    awaitsFinality: () => rejudge.awaitsFinality,
    // The block just read extends the window: its own re-check before success would ask the RPC
    // what it answered a moment ago.
    async handle(event, fence, window) {
      if (event.type !== 'block') {
        await deps.verdicts.round(null, () => handleOther(event, fence, window))
        return
      }
      const started = performance.now()
      const { block, finalized, record } = event
      // The block is recorded as processed in the transaction of its follow-up's verdicts.
      const fresh = { number: block.number, hash: block.hash, window }
      const latest = event.latest === true
      // A block caught up on is not news to announce at once: its follow-up's reads go beside its own, as
      // throughput matters more there than the moment its callbacks leave.
      const around = latest ? undefined : reads.around(block, finalized, window)
      around?.catch(() => {})
      const { judged } = await deps.verdicts.round(fresh, () => payingLane(block, finalized, latest, fence))
      // The newest block's callbacks leave before the follow-up's reads take the main thread (embedded database).
      const left = deps.verdicts.callbacksLeft()
      if (latest) await left
      const rejudged = await deps.verdicts.round(
        fresh,
        () => followUpLane(block, finalized, new Set(judged), fence, window, around),
        record,
      )
      // From the block read to every verdict of it written (each round writes them at its end).
      const ms = performance.now() - started
      deps.metrics.blockProcessed(deps.chain, ms / 1000)
      deps.onBlockProcessed?.({
        chain: deps.chain,
        number: block.number,
        transactions: block.transactions.length,
        candidates: judged.length,
        rejudged,
        ms,
      })
      return record ? 'recorded' : undefined
    },
  }
}
