import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import { once } from '../chain/rpc-metrics.ts'
import type { Clock } from '../common/clock.ts'

export interface EngineMetrics {
  head(chain: string, number: bigint, timestamp: bigint): void
  finalized(chain: string, number: bigint): void
  blockProcessed(chain: string, seconds: number): void
  reorg(chain: string, depth: number): void
  completed(chain: string, status: string, reason: string | null): void
  /** A success's paying transaction left the canonical chain before its block was final. */
  revertedAfterSuccess(chain: string): void
}

/**
 * Per chain: head number and age, finalized block, blocks processed, processing time, reorgs,
 * completions, successes reverted by a reorg; and pending trackings, counted from the database
 * when scraped (exactly up to 10,000, estimated past that: src/store/pending-counts.ts).
 */
export function createEngineMetrics(
  registry: Registry,
  options: { now: Clock; chains: string[]; countPending: () => Promise<Map<string, number>> },
): EngineMetrics {
  const headTimestamps = new Map<string, number>()
  const head = once(
    registry,
    'paywatch_chain_head_block',
    () =>
      new Gauge({
        name: 'paywatch_chain_head_block',
        help: 'Newest block processed by this node, per chain',
        labelNames: ['chain'],
        registers: [registry],
      }),
  )
  once(
    registry,
    'paywatch_chain_head_age_seconds',
    () =>
      new Gauge({
        name: 'paywatch_chain_head_age_seconds',
        help: 'Age of the newest processed block (now - block timestamp)',
        labelNames: ['chain'],
        registers: [registry],
        collect() {
          const now = options.now().getTime() / 1000
          for (const [chain, timestamp] of headTimestamps) this.set({ chain }, Math.max(0, now - timestamp))
        },
      }),
  )
  const finalized = once(
    registry,
    'paywatch_chain_finalized_block',
    () =>
      new Gauge({
        name: 'paywatch_chain_finalized_block',
        help: 'Finalized block as known to the follower',
        labelNames: ['chain'],
        registers: [registry],
      }),
  )
  const blocks = once(
    registry,
    'paywatch_chain_blocks_processed_total',
    () =>
      new Counter({
        name: 'paywatch_chain_blocks_processed_total',
        help: 'Blocks processed by the chain engine',
        labelNames: ['chain'],
        registers: [registry],
      }),
  )
  const processing = once(
    registry,
    'paywatch_chain_block_processing_seconds',
    () =>
      new Histogram({
        name: 'paywatch_chain_block_processing_seconds',
        help: 'Time to match and judge one block',
        labelNames: ['chain'],
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
        registers: [registry],
      }),
  )
  const reorgs = once(
    registry,
    'paywatch_chain_reorgs_total',
    () =>
      new Counter({
        name: 'paywatch_chain_reorgs_total',
        help: 'Chain reorganizations seen',
        labelNames: ['chain'],
        registers: [registry],
      }),
  )
  const reorgDepth = once(
    registry,
    'paywatch_chain_reorg_depth_blocks_total',
    () =>
      new Counter({
        name: 'paywatch_chain_reorg_depth_blocks_total',
        help: 'Blocks replaced by reorganizations',
        labelNames: ['chain'],
        registers: [registry],
      }),
  )
  const completions = once(
    registry,
    'paywatch_trackings_completed_total',
    () =>
      new Counter({
        name: 'paywatch_trackings_completed_total',
        help: 'Trackings completed by this node',
        labelNames: ['chain', 'status', 'reason'],
        registers: [registry],
      }),
  )
  const revertedAfterSuccess = once(
    registry,
    'paywatch_reverted_after_success_total',
    () =>
      new Counter({
        name: 'paywatch_reverted_after_success_total',
        help: 'Successful payments whose transaction left the canonical chain (a reorg deeper than their confirmations)',
        labelNames: ['chain'],
        registers: [registry],
      }),
  )
  once(
    registry,
    'paywatch_trackings_pending',
    () =>
      new Gauge({
        name: 'paywatch_trackings_pending',
        help: 'Pending trackings per chain',
        labelNames: ['chain'],
        registers: [registry],
        async collect() {
          try {
            const counts = await options.countPending()
            this.reset()
            for (const chain of options.chains) this.set({ chain }, 0)
            for (const [chain, count] of counts) this.set({ chain }, count)
          } catch {
            // A database hiccup must not fail the whole scrape.
          }
        },
      }),
  )
  return {
    head(chain, number, timestamp) {
      head.set({ chain }, Number(number))
      headTimestamps.set(chain, Number(timestamp))
    },
    finalized: (chain, number) => finalized.set({ chain }, Number(number)),
    blockProcessed(chain, seconds) {
      blocks.inc({ chain })
      processing.observe({ chain }, seconds)
    },
    reorg(chain, depth) {
      reorgs.inc({ chain })
      reorgDepth.inc({ chain }, depth)
    },
    completed: (chain, status, reason) => completions.inc({ chain, status, reason: reason ?? '' }),
    revertedAfterSuccess: (chain) => revertedAfterSuccess.inc({ chain }),
  }
}
