import type { WindowView } from './block-follower.ts'
import type { Logger } from 'pino'
import { systemClock, type Clock } from '../common/clock.ts'
import type { TrackingEvents } from '../common/tracking-events.ts'
import type { WriteFence } from '../store/chain-leases.ts'
import type { Db } from '../store/infrastructure/database.ts'
import {
  deleteSuccessWatches,
  dropRevertedWatches,
  findWatchesToCheck,
  reconfirmSuccessWatch,
  takeSuccessWatches,
  type SuccessWatch,
} from '../store/success-watches.ts'
import type { EngineMetrics } from './engine-metrics.ts'

export interface SuccessWatchDeps {
  chain: string
  db: Db
  events: TrackingEvents
  logger: Logger
  metrics: EngineMetrics
  /** Where a transaction is mined now (its receipt); without it a reverted success is not watched for re-mining. */
  receipt?: (transaction: `0x${string}`) => Promise<{ blockNumber: bigint; blockHash: string; status: string } | null>
  clock?: Clock
}

export interface SuccessWatcher {
  /**
   * The watched successes `check` acts on at `block`, read alongside its other queries: the reverted ones,
   * those whose block is final, and those whose height `block` or the follower's `window` holds with
   * another block. A watch on a canonical block that is not final yet is not read: nothing is to be done.
   */
  read(block: { number: bigint; hash: string }, finalized: bigint, window?: WindowView): Promise<SuccessWatch[]>
  /**
   * After `block` was judged: a watched success whose block is final ends its watch; one whose
   * block the chain no longer holds (or another block took its height) is reverted; a reverted one
   * whose transaction is in a canonical block again with its confirmations is reconfirmed. `fence`:
   * the follower's lease, as for its other writes; `window`: the follower's, which `block` is not in yet.
   */
  check(
    watches: SuccessWatch[],
    block: { number: bigint; hash: string },
    finalized: bigint,
    fence?: WriteFence,
    window?: WindowView,
  ): Promise<void>
  /** A reorg replaced the blocks above `ancestor`: the successes found in them are reverted. */
  reorg(ancestor: bigint, fence?: WriteFence): Promise<void>
}

/** How long a reverted success's transaction is looked for before its watch ends. */
const REMINED_WITHIN_MS = 24 * 60 * 60 * 1000

/**
 * Success is final, but a reorg deeper than a payment's confirmations can still take its
 * transaction off the chain. The tracking stays `success`; this names it (a warning, the
 * `paywatch_reverted_after_success_total` counter, `payment.reverted` recorded with the record's
 * `reverted_at` and its event delivery, and a `reverted` event on the tracking bus), and keeps
 * watching: when the transaction is mined again and reaches the tracking's confirmations,
 * `payment.reconfirmed` (docs/api.md §8). Cheap: one query per block, answering only the watches to act
 * on; a receipt read per block only for reverted ones.
 */
export function createSuccessWatcher(deps: SuccessWatchDeps): SuccessWatcher {
  const log = deps.logger.child({ chain: deps.chain })
  const clock = deps.clock ?? systemClock

  const announce = async (taken: Awaited<ReturnType<typeof takeSuccessWatches>>) => {
    for (const { watch, tracking, sent } of taken) {
      deps.metrics.revertedAfterSuccess(deps.chain)
      log.warn(
        {
          tracking: tracking.id,
          transaction: watch.transaction,
          block: watch.blockNumber,
          blockHash: watch.blockHash,
          confirmations: tracking.confirmations,
        },
        'successful payment left the canonical chain',
      )
      deps.events.emit('reverted', {
        tracking,
        transaction: watch.transaction,
        blockNumber: watch.blockNumber,
        blockHash: watch.blockHash,
        sent,
      })
    }
  }

  /** Is the reverted transaction mined again, canonical, with its confirmations at `block`? */
  async function remined(
    watch: SuccessWatch,
    block: { number: bigint; hash: string },
    window: WindowView | undefined,
  ): Promise<{ number: bigint; hash: string } | null> {
    let receipt: Awaited<ReturnType<NonNullable<SuccessWatchDeps['receipt']>>>
    try {
      receipt = await deps.receipt!(watch.transaction as `0x${string}`)
    } catch (error) {
      log.debug({ err: error, tracking: watch.trackingId }, 'reading a reverted payment transaction failed; next block')
      return null
    }
    if (!receipt || receipt.status !== 'success' || receipt.blockNumber > block.number) return null
    const hash = receipt.blockHash.toLowerCase()
    const canonical = receipt.blockNumber === block.number ? hash === block.hash.toLowerCase() : window?.holds(receipt.blockNumber, hash)
    if (canonical === false) return null
    if (block.number - receipt.blockNumber + 1n < BigInt(watch.confirmations ?? 1)) return null
    return { number: receipt.blockNumber, hash }
  }

  async function checkReverted(
    reverted: SuccessWatch[],
    block: { number: bigint; hash: string },
    fence: WriteFence | undefined,
    window: WindowView | undefined,
  ) {
    const now = clock()
    if (reverted.some((watch) => now.getTime() - watch.revertedAt!.getTime() > REMINED_WITHIN_MS))
      await dropRevertedWatches(deps.db, deps.chain, new Date(now.getTime() - REMINED_WITHIN_MS), fence)
    if (!deps.receipt) return
    for (const watch of reverted) {
      const found = await remined(watch, block, window)
      if (!found) continue
      const event = await reconfirmSuccessWatch(deps.db, watch.trackingId, found, clock(), fence)
      if (!event) continue
      log.warn({ tracking: watch.trackingId, transaction: watch.transaction, block: found.number }, 'reverted payment mined again')
      deps.events.emit('reconfirmed', { tracking: event.tracking, sent: event.sent })
    }
  }

  return {
    read(block, finalized, window) {
      // As `check` decides it: the block being processed is not in the window yet and is compared directly.
      const canonical = (window?.blocks() ?? []).filter((held) => held.number !== block.number)
      canonical.push({ number: block.number, hash: block.hash.toLowerCase() })
      return findWatchesToCheck(deps.db, deps.chain, finalized, canonical)
    },
    async check(watches, block, finalized, fence, window) {
      const final: string[] = []
      const gone: string[] = []
      const reverted: SuccessWatch[] = []
      for (const watch of watches) {
        if (watch.revertedAt !== undefined) {
          reverted.push(watch)
          continue
        }
        // The block being processed is not in the window yet: compared with it directly.
        const held =
          watch.blockNumber === block.number
            ? watch.blockHash === block.hash.toLowerCase()
            : window?.holds(watch.blockNumber, watch.blockHash)
        if (held === false) gone.push(watch.trackingId)
        else if (watch.blockNumber <= finalized) final.push(watch.trackingId)
      }
      await deleteSuccessWatches(deps.db, final, fence)
      await announce(await takeSuccessWatches(deps.db, deps.chain, { trackingIds: gone }, fence, clock()))
      if (reverted.length > 0) await checkReverted(reverted, block, fence, window)
    },
    async reorg(ancestor, fence) {
      await announce(await takeSuccessWatches(deps.db, deps.chain, { above: ancestor }, fence, clock()))
    },
  }
}
