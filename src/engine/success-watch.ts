import type { Logger } from 'pino'
import type { TrackingEvents } from '../common/tracking-events.ts'
import type { WriteFence } from '../store/chain-leases.ts'
import type { Db } from '../store/database.ts'
import { deleteSuccessWatches, findSuccessWatches, takeSuccessWatches, type SuccessWatch } from '../store/success-watches.ts'
import type { EngineMetrics } from './engine-metrics.ts'

export interface SuccessWatchDeps {
  chain: string
  db: Db
  events: TrackingEvents
  logger: Logger
  metrics: EngineMetrics
  /** The follower's window: whether `hash` is canonical at `number` (undefined outside the window). */
  holds(number: bigint, hash: string): boolean | undefined
}

export interface SuccessWatcher {
  /** The watched successes, read alongside a block's other queries. */
  read(): Promise<SuccessWatch[]>
  /**
   * After `block` was judged: a watched success whose block is final ends its watch; one whose
   * block the chain no longer holds (or another block took its height) is reverted. `fence`: the
   * follower's lease, as for its other writes.
   */
  check(watches: SuccessWatch[], block: { number: bigint; hash: string }, finalized: bigint, fence?: WriteFence): Promise<void>
  /** A reorg replaced the blocks above `ancestor`: the successes found in them are reverted. */
  reorg(ancestor: bigint, fence?: WriteFence): Promise<void>
}

/**
 * Success is final, but a reorg deeper than a payment's confirmations can still take its
 * transaction off the chain. The tracking stays `success`; this names it (a warning, the
 * `paywatch_reverted_after_success_total` counter and a `reverted` event on the tracking bus, which
 * later consumers such as webhooks can act on). Cheap: one indexed query per block, over the
 * successes whose block is not final yet.
 */
export function createSuccessWatcher(deps: SuccessWatchDeps): SuccessWatcher {
  const log = deps.logger.child({ chain: deps.chain })

  const announce = async (taken: Awaited<ReturnType<typeof takeSuccessWatches>>) => {
    for (const { watch, tracking } of taken) {
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
      deps.events.emit('reverted', { tracking, transaction: watch.transaction, blockNumber: watch.blockNumber, blockHash: watch.blockHash })
    }
  }

  return {
    read: () => findSuccessWatches(deps.db, deps.chain),
    async check(watches, block, finalized, fence) {
      const final: string[] = []
      const gone: string[] = []
      for (const watch of watches) {
        // The block being processed is not in the window yet: compared with it directly.
        const held =
          watch.blockNumber === block.number ? watch.blockHash === block.hash.toLowerCase() : deps.holds(watch.blockNumber, watch.blockHash)
        if (held === false) gone.push(watch.trackingId)
        else if (watch.blockNumber <= finalized) final.push(watch.trackingId)
      }
      await deleteSuccessWatches(deps.db, final, fence)
      await announce(await takeSuccessWatches(deps.db, deps.chain, { trackingIds: gone }, fence))
    },
    async reorg(ancestor, fence) {
      await announce(await takeSuccessWatches(deps.db, deps.chain, { above: ancestor }, fence))
    },
  }
}
