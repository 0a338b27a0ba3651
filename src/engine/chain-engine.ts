import type { DeliveryHandoff } from '../store/deliveries.ts'
import type { Common } from '../common/common.ts'
import type { ChainRegistry } from '../chain/registry.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { ChainReadiness } from '../common/readiness.ts'
import type { TrackingEvents } from '../common/tracking-events.ts'
import type { DatabaseHandle } from '../store/infrastructure/database.ts'
import { countPendingTrackings } from '../store/pending-counts.ts'
import { createChainContext, type ChainContext } from './chain-context.ts'
import type { BlockProcessed } from './chain-processor.ts'
import type { ChainRunner } from './chain-runner.ts'
import { createEngineMetrics } from './engine-metrics.ts'
import { chainsReadiness } from './engine-readiness.ts'
import { createFastPathChecks } from './fast-path-checks.ts'
import { createLeaseChannel, type LeaseChannelOptions } from './lease-channel.ts'
import { createQuietMoments } from './quiet-moments.ts'
import { sweepTimedOut } from './sweeper.ts'

export interface ChainEngineDeps {
  database: DatabaseHandle
  chains: ChainRegistry
  events: TrackingEvents
  /** Readiness of the chains this node does not follow (another node leads them): an RPC probe. */
  fallbackReadiness: () => Promise<ChainReadiness[]>
  /** This node's delivery worker, handed the verdicts' callbacks as they commit. */
  deliveries?: DeliveryHandoff
}

export interface ChainEngineOptions extends LeaseChannelOptions {
  /** How often timed-out trackings are failed. */
  sweepIntervalMs?: number
  /** Fast-path checks running at once. */
  fastPathConcurrency?: number
  /** Told after each processed block (benchmarks, diagnostics). */
  onBlockProcessed?: (info: BlockProcessed) => void
  /** Pause between two polls of the checks owed to new trackings (fast-path-checks.ts `resume`); default 1 s. */
  owedChecksPollMs?: number
  /** Pause between two probes of every provider (heads, identity); default max(polling interval, 5 s). */
  providerProbeMs?: number
}

export interface ChainEngine {
  start(): Promise<void>
  stop(): Promise<void>
  readiness(): Promise<ChainReadiness[]>
  /** Fails timed-out trackings now; returns how many. */
  sweep(): Promise<number>
  /** Follows every chain this node leads up to its RPC's head now (tests, benchmarks). */
  syncNow(): Promise<void>
  /** Runs the fast-path check of a tracking now and waits for it (tests). */
  check(tracking: Tracking): Promise<void>
  runner(chain: string): ChainRunner | undefined
  /** Probes every chain's providers now: heads, capabilities, identity (tests). */
  probeProviders(): Promise<void>
  /**
   * Resolves right after the next block this node processes (quiet-moments.ts), after `maxWaitMs` at most,
   * and at once while it follows no chain.
   */
  quietMoment(maxWaitMs: number): Promise<void>
}

/** How long a poll of the checks owed to new trackings waits for a quiet moment at most. */
const OWED_CHECKS_QUIET_WAIT_MS = 1_000

/**
 * The chain tracking engine: one runner per tracked chain (followed by one node at a time, under
 * the lease channel), the fast path for new trackings, and the time-out sweeper.
 */
export function createChainEngine(common: Common, deps: ChainEngineDeps, options: ChainEngineOptions = {}): ChainEngine {
  const { logger, clock } = common
  const db = deps.database.db
  const chainNames = deps.chains.all().map((c) => c.config.name)
  const metrics = createEngineMetrics(common.metrics.registry, {
    now: clock,
    chains: chainNames,
    countPending: async () => (await countPendingTrackings(db, chainNames)).counts,
  })
  const contexts = new Map<string, ChainContext>()
  const quiet = createQuietMoments()
  const onBlockProcessed = (info: BlockProcessed) => {
    options.onBlockProcessed?.(info)
    quiet.blockProcessed()
  }
  const leases = createLeaseChannel(
    deps.database,
    logger,
    (chain) => {
      if (chain === undefined) for (const context of contexts.values()) context.lock.wake()
      else contexts.get(chain)?.lock.wake()
    },
    options,
  )
  for (const handle of deps.chains.all()) {
    contexts.set(
      handle.config.name,
      createChainContext({
        handle,
        db,
        events: deps.events,
        clock,
        logger,
        metrics,
        deliveries: deps.deliveries,
        lock: leases.lockFor(handle.config.name),
        onBlockProcessed,
        providerProbeMs: options.providerProbeMs,
      }),
    )
  }

  const checks = createFastPathChecks({
    db,
    logger,
    clock,
    chainOf: (name) => contexts.get(name)?.fastPath,
    trackingTimeoutSec: common.config.trackingTimeoutSec,
    concurrency: options.fastPathConcurrency,
  })
  const onTracked = (tracking: Tracking) => void checks.check(tracking)

  const sweep = () =>
    sweepTimedOut({
      db,
      clock,
      events: deps.events,
      logger,
      timeoutSec: common.config.trackingTimeoutSec,
      onCompleted: (chain) => metrics.completed(chain, 'failed', 'TRACKING_TIMED_OUT'),
    })
  let sweeper: NodeJS.Timeout | undefined

  // The checks still owed on the chains this node follows, polled at the engine's quiet moments (right after a
  // block): a poll that finds none is one read of an index of a small table.
  let owedPoller: NodeJS.Timeout | undefined
  let waitingForQuiet = false
  let resuming: Promise<void> | undefined
  const pollOwedChecks = () => {
    if (waitingForQuiet || resuming) return
    waitingForQuiet = true
    void quiet.next(OWED_CHECKS_QUIET_WAIT_MS).then(() => {
      waitingForQuiet = false
      if (owedPoller === undefined) return // stopped meanwhile
      const followed = [...contexts.entries()].filter(([, context]) => context.runner.status === 'following')
      resuming = Promise.all(followed.map(([name]) => checks.resume(name)))
        .then(
          () => undefined,
          (error: unknown) => logger.warn({ err: error }, 'reading the checks owed to new trackings failed'),
        )
        .finally(() => {
          resuming = undefined
        })
    })
  }

  return {
    async start() {
      // A graceful stop hands the chains over first, before the HTTP API and the rest wind down.
      common.shutdown.signal.addEventListener(
        'abort',
        () => {
          for (const context of contexts.values()) void context.runner.resign()
        },
        { once: true },
      )
      deps.events.on('tracked', onTracked)
      await leases.start()
      for (const context of contexts.values()) {
        context.monitor.start()
        context.runner.start()
      }
      const interval = options.sweepIntervalMs ?? Math.min(60_000, common.config.trackingTimeoutSec * 100)
      const sweepNow = () => void sweep().catch((error: unknown) => logger.warn({ err: error }, 'time-out sweep failed'))
      sweepNow()
      sweeper = setInterval(sweepNow, interval)
      sweeper.unref()
      owedPoller = setInterval(pollOwedChecks, options.owedChecksPollMs ?? 1_000)
      owedPoller.unref()
    },
    async stop() {
      checks.halt()
      deps.events.off('tracked', onTracked)
      clearInterval(sweeper)
      clearInterval(owedPoller)
      owedPoller = undefined
      for (const context of contexts.values()) context.monitor.stop()
      await Promise.all([...contexts.values()].map((context) => context.runner.stop()))
      await checks.settle()
      await resuming
      await leases.stop()
    },
    readiness: () => chainsReadiness(contexts.values(), deps.fallbackReadiness, clock),
    sweep,
    async syncNow() {
      await Promise.all([...contexts.values()].map((context) => context.runner.syncNow()))
    },
    check: (tracking) => checks.check(tracking),
    runner: (chain) => contexts.get(chain)?.runner,
    async probeProviders() {
      await Promise.all([...contexts.values()].map((context) => context.monitor.round()))
    },
    quietMoment(maxWaitMs) {
      const following = [...contexts.values()].some((context) => context.runner.status === 'following')
      return following ? quiet.next(maxWaitMs) : Promise.resolve()
    },
  }
}
