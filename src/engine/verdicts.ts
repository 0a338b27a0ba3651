import type { Logger } from 'pino'
import { afterRequestsLeave, withinMs } from './request-turns.ts'
import type { Clock } from '../common/clock.ts'
import { recordedTransaction, type Expectation, type Judgement } from '../domain/judge.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { TrackingEvents } from '../common/tracking-events.ts'
import { completeTrackings, type Completion } from '../store/complete-tracking.ts'
import type { WriteFence } from '../store/chain-leases.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { handedOffDelivery, type DeliveryHandoff } from '../store/deliveries.ts'
import { createMatchStore, type MatchStore, type TrackingMatch } from '../store/tracking-matches.ts'
import type { BlockRecord, WindowView } from './block-follower.ts'
import type { EngineMetrics } from './engine-metrics.ts'
import { judgedOf, type EvidenceQuorum } from './evidence-quorum.ts'

export interface VerdictDeps {
  chain: string
  db: Db
  events: TrackingEvents
  clock: Clock
  logger: Logger
  metrics: EngineMetrics
  /**
   * Asks the RPC whether `hash` is still the canonical block at `number`, right before a final
   * write (the window may be a block behind the RPC, or the RPC may have failed over).
   */
  isCanonical(number: bigint, hash: string): Promise<boolean>
  /** Checks a would-be final verdict's evidence with `quorum` providers (evidence-quorum.ts); absent: quorum 1. */
  quorum?: EvidenceQuorum
  /** This node's delivery worker: the verdicts' callbacks are handed to it as they commit. */
  deliveries?: DeliveryHandoff
  /** Where a match waiting for its commitment is kept (default: the database's, `createMatchStore`). */
  matches?: MatchStore
}

export interface Verdicts {
  /**
   * Acts on a judgement: pending → remember the match (re-judged on each block) and publish
   * progress when it changed (a failing transaction waits for its confirmations the same way as a
   * paying one); success/failed → once the match's block is confirmed canonical, one transaction
   * with the delivery row (and the watch of a success's block), then the `completed` event.
   * `match` is where the judged transaction was found (null: nothing found).
   * `fence`: the chain follower's lease; its writes land only while this node still leads the chain.
   */
  apply(
    tracking: Tracking,
    expectation: Expectation,
    judgement: Judgement,
    match: TrackingMatch | null,
    stored: boolean,
    fence?: WriteFence,
  ): Promise<void>
  /** The tracking's match was dropped (reorg): it is searched for again; progress falls back to 0. */
  searchingAgain(trackingId: string): void
  /** Publishes progress for `tracking` when it differs from the last one published. */
  progress(tracking: Tracking, required: number, passed: number): void
  /**
   * Runs one round of a follower event (a block has two, chain-processor.ts: its own payments, then its
   * follow-up): within it, each block's canonical re-check is asked once, `fresh`
   * (the block just read from the RPC) needs no re-check, nor does a block its `window` holds, and the final verdicts are written
   * together in one transaction when the work is done (their `completed` events after it), with
   * `record`, the block as processed, when the work succeeded.
   */
  round<T>(fresh: { number: bigint; hash: string; window?: WindowView } | null, work: () => Promise<T>, record?: BlockRecord): Promise<T>
  /** Forgets the progress of trackings no longer matched (completed elsewhere: time-out, another node). */
  retain(matchedIds: Set<string>): void
  /**
   * Resolves once the callbacks handed to this node's worker by the writes since the last call are on the
   * wire (at most ~`CALLBACKS_LEAVE_WAIT_MS`; at once when there were none): on the embedded database the
   * engine's next reads hold the main thread, and requests not yet written would wait behind them.
   */
  callbacksLeft(): Promise<void>
}

/** A final verdict on its way to the database; `stored`: its match row goes with it. */
interface FinalWrite {
  tracking: Tracking
  completion: Completion
  stored: boolean
  fence: WriteFence | undefined
  log: Logger
}

/** How long the engine waits at most for a block's callbacks to leave (a host whose slots are all busy keeps them). */
const CALLBACKS_LEAVE_WAIT_MS = 20

export function createVerdicts(deps: VerdictDeps): Verdicts {
  const matches = deps.matches ?? createMatchStore(deps.db, deps.clock)
  /** Last progress published per matched tracking, so only changes are published. */
  const published = new Map<string, { tracking: Tracking; required: number; passed: number }>()

  const progress = (tracking: Tracking, required: number, passed: number) => {
    const last = published.get(tracking.id)
    if (last && last.required === required && last.passed === passed) return
    published.set(tracking.id, { tracking, required, passed })
    deps.events.emit('progress', { tracking, required, passed })
  }

  /** Canonical answers of the current round (undefined outside a round: always ask). */
  let canonicalInRound: Map<string, Promise<boolean>> | undefined
  /** The window the round's fresh block extends: every block it holds is an ancestor of that block. */
  let windowInRound: WindowView | undefined
  const isCanonical = (number: bigint, hash: string): Promise<boolean> => {
    // The fresh block was just read from the RPC and links to the window: what the window holds is the
    // RPC's chain as of that read, as the fresh block itself is (no second check of the same fact by RPC).
    const held = windowInRound?.holds(number, hash)
    if (held !== undefined) return Promise.resolve(held)
    const key = `${number}:${hash.toLowerCase()}`
    let answer = canonicalInRound?.get(key)
    if (!answer) {
      answer = deps.isCanonical(number, hash)
      canonicalInRound?.set(key, answer)
    }
    return answer
  }

  /** Trackings whose unprovable failure was logged already (once per tracking). */
  const unprovenLogged = new Set<string>()

  /** The callbacks handed to this node's worker since `callbacksLeft` was last asked, until their requests leave. */
  let leaving: Promise<void> | undefined

  /** Final verdicts of the current round, written when it ends (undefined outside a round: at once). */
  let roundWrites: FinalWrite[] | undefined

  /**
   * Writes final verdicts, one transaction per write fence (a round has one), with the round's block
   * record in the transaction of its fence; then announces them.
   */
  const write = async (writes: FinalWrite[], record?: BlockRecord) => {
    const byFence = new Map<WriteFence | undefined, FinalWrite[]>()
    for (const w of writes) {
      const group = byFence.get(w.fence) ?? []
      group.push(w)
      byFence.set(w.fence, group)
    }
    const now = deps.clock()
    // Their callbacks are signed while the transaction runs (a signature takes about as long as the write).
    for (const w of writes) deps.events.emit('completing', completedAs(w.tracking, w.completion, now))
    for (const [fence, group] of byFence) {
      const requests = group.map((w) => ({ id: w.tracking.id, completion: w.completion, dropMatch: w.stored, asRead: w.tracking }))
      const alsoWrite = record?.fence === fence ? record?.insert : undefined
      if (alsoWrite) record = undefined
      const lease = deps.deliveries?.lease(now)
      const results = await completeTrackings(deps.db, requests, now, { fence, alsoWrite, lease })
      // Committed: the callbacks go to this node's worker at once (no claim query in between).
      if (lease) {
        const taking = deps.deliveries!.take(
          results.flatMap((done) => (done?.deliveryId ? [handedOffDelivery(done.deliveryId, done.tracking, lease)] : [])),
        )
        leaving = leaving ? Promise.all([leaving, taking]).then(() => {}) : taking
        // The callbacks are handed to the sender before the verdicts' logs and events (ten of them took ~1.3 ms
        // of the main thread, which the requests waited behind).
        await withinMs(taking, CALLBACKS_LEAVE_WAIT_MS)
      }
      group.forEach((w, k) => {
        published.delete(w.tracking.id)
        unprovenLogged.delete(w.tracking.id)
        const done = results[k]?.tracking
        if (!done) return
        deps.metrics.completed(deps.chain, done.status, done.failedReason)
        w.log.info({ status: done.status, reason: done.failedReason, transaction: done.transaction }, 'tracking completed')
        deps.events.emit('completed', done)
      })
    }
    if (record) await record.save()
  }

  /** Success and failed alike: written only while the block the verdict rests on is canonical. */
  const complete = async (
    tracking: Tracking,
    expectation: Expectation,
    completion: Completion,
    match: TrackingMatch | null,
    stored: boolean,
    fence?: WriteFence,
  ) => {
    const log = deps.logger.child({ chain: deps.chain, tracking: tracking.id, block: match?.blockNumber })
    if (!match) {
      // Every verdict rests on a mined transaction: without its block there is nothing to re-check.
      log.warn({ status: completion.status }, 'verdict without the block it rests on: not completing')
      return
    }
    if (completion.status === 'failed' && judgedOf(match)?.internalValueUnknown) {
      // A native payment through a contract, and no provider offers a trace of its internal calls:
      // the value may have reached the receiver there. Missing evidence never fails a payment.
      if (!unprovenLogged.has(tracking.id)) {
        unprovenLogged.add(tracking.id)
        log.warn(
          { transaction: match.transaction, reason: completion.failedReason },
          'native value moved by internal calls cannot be read (no provider offers a trace): the payment stays pending',
        )
      }
      if (!stored) await matches.save(match, fence)
      return
    }
    // A deadline passed with no payment rests on a block, not on a transaction's evidence: nothing to vote on.
    const timedOut = completion.status === 'failed' && completion.failedReason === 'TRACKING_TIMED_OUT'
    if (deps.quorum && !timedOut) {
      const checked = await deps.quorum.confirm(expectation, match)
      if (checked.outcome === 'corrected') {
        // Judged again from the agreed evidence on the next block.
        await matches.save(checked.match, fence)
        return
      }
      if (checked.outcome === 'undecided') {
        // A dispute is logged by the quorum, once per state: not again on every block here.
        if (!checked.disputed)
          log.info({ status: completion.status, answers: checked.answers }, 'no quorum of providers on the evidence yet: not completing')
        if (!stored) await matches.save(match, fence)
        return
      }
    }
    if (!(await isCanonical(match.blockNumber, match.blockHash))) {
      // The block was reorganized away after the window last saw it: the follower will notice
      // and the tracking is searched for again.
      log.info('inclusion block no longer canonical: not completing yet')
      return
    }
    const final: FinalWrite = { tracking, completion, stored, fence, log }
    if (roundWrites) roundWrites.push(final)
    else await write([final])
  }

  return {
    progress,
    retain(matchedIds) {
      for (const id of published.keys()) if (!matchedIds.has(id)) published.delete(id)
    },
    async round(fresh, work, record) {
      const writes: FinalWrite[] = []
      canonicalInRound = new Map()
      windowInRound = fresh?.window
      roundWrites = writes
      if (fresh) canonicalInRound.set(`${fresh.number}:${fresh.hash.toLowerCase()}`, Promise.resolve(true))
      let done = false
      try {
        const result = await work()
        done = true
        return result
      } finally {
        canonicalInRound = undefined
        windowInRound = undefined
        roundWrites = undefined
        // Also when part of the work failed: the verdicts reached stand (the block is handled again).
        if (writes.length > 0 || (done && record)) await write(writes, done ? record : undefined)
      }
    },
    callbacksLeft() {
      const handedOff = leaving
      leaving = undefined
      if (!handedOff) return Promise.resolve()
      // Twice: a block's callbacks go out on one connection each, and the last ones were measured leaving a turn later.
      return withinMs(handedOff, CALLBACKS_LEAVE_WAIT_MS).then(afterRequestsLeave).then(afterRequestsLeave)
    },
    searchingAgain(trackingId) {
      const last = published.get(trackingId)
      if (last && last.passed !== 0) progress(last.tracking, last.required, 0)
    },
    async apply(tracking, expectation, judgement, match, stored, fence) {
      const transaction = recordedTransaction(expectation, judgement)
      switch (judgement.status) {
        case 'pending':
          if (match && !stored) await matches.save(match, fence)
          if (match) progress(tracking, judgement.confirmations.required, judgement.confirmations.passed)
          return
        case 'success': {
          // A success by confirmations rests on a block the chain may still drop: watched until final.
          const inclusion =
            match && expectation.commitment === 'confirmed'
              ? { chain: deps.chain, blockNumber: match.blockNumber, blockHash: match.blockHash }
              : undefined
          // A nonce-less tracking takes the paying transaction's sender and nonce with its success.
          const paid = tracking.nonce === null && match ? judgedOf(match) : null
          const identity = paid ? { sender: paid.from.toLowerCase(), nonce: paid.nonce } : undefined
          return complete(
            tracking,
            expectation,
            { status: 'success', transaction: transaction ?? judgement.transaction, inclusion, identity },
            match,
            stored,
            fence,
          )
        }
        case 'failed':
          return complete(tracking, expectation, { status: 'failed', failedReason: judgement.reason, transaction }, match, stored, fence)
      }
    },
  }
}

/** The tracking as `completion` written at `now` will read (a link's payment may get a later confirmation time). */
function completedAs(tracking: Tracking, completion: Completion, now: Date): Tracking {
  const success = completion.status === 'success'
  return {
    ...tracking,
    status: completion.status,
    failedReason: success ? null : completion.failedReason,
    transaction: completion.transaction ?? tracking.transaction,
    sender: (success && completion.identity?.sender) || tracking.sender,
    nonce: success && completion.identity ? completion.identity.nonce : tracking.nonce,
    confirmedAt: success ? now : null,
    updatedAt: now,
  }
}
