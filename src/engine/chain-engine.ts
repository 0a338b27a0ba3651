import { hostname } from 'node:os'
import { randomUUID } from 'node:crypto'
import type { Common } from '../common/common.ts'
import { createChainReader, type ChainReader } from '../chain/chain-reader.ts'
import { NonRetryableChainError } from '../chain/errors.ts'
import { failureFields } from '../chain/rpc-failure.ts'
import { createFinality } from '../chain/finality.ts'
import { chainLease, type LeaderLock } from './leader-lock.ts'
import { createEvidenceReader } from '../chain/payment-evidence.ts'
import type { ChainHandle, ChainRegistry } from '../chain/registry.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { ChainReadiness } from '../common/readiness.ts'
import type { TrackingEvents } from '../common/tracking-events.ts'
import { openDedicatedConnection, type DatabaseHandle } from '../store/database.ts'
import { createPgListener } from '../store/pg-listener.ts'
import { countPendingTrackings, findPendingTracking } from '../store/tracking-matches.ts'
import { createReceiptSource } from './block-evidence.ts'
import { createChainProcessor, type BlockProcessed } from './chain-processor.ts'
import { createChainRunner, type ChainRunner } from './chain-runner.ts'
import { createEngineMetrics } from './engine-metrics.ts'
import { checkNewTracking, type FastPathDeps } from './fast-path.ts'
import { createSuccessWatcher } from './success-watch.ts'
import { sweepTimedOut } from './sweeper.ts'
import { createVerdicts } from './verdicts.ts'

export interface ChainEngineDeps {
  database: DatabaseHandle
  chains: ChainRegistry
  events: TrackingEvents
  /** Readiness of the chains this node does not follow (another node leads them): an RPC probe. */
  fallbackReadiness: () => Promise<ChainReadiness[]>
}

export interface ChainEngineOptions {
  /** How often timed-out trackings are failed. */
  sweepIntervalMs?: number
  /** How often a standby node tries to take a chain's lead (PostgreSQL). */
  lockRetryMs?: number
  /** How long a chain's lease lasts without renewal, and how often its leader renews it. */
  leaseTtlMs?: number
  leaseRenewMs?: number
  /** Fast-path checks running at once. */
  fastPathConcurrency?: number
  /** Told after each processed block (benchmarks, diagnostics). */
  onBlockProcessed?: (info: BlockProcessed) => void
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
}

const LEASE_CHANNEL = 'paywatch_chain_lease'

interface ChainContext {
  handle: ChainHandle
  reader: ChainReader
  runner: ChainRunner
  lock: LeaderLock
  fastPath: FastPathDeps
}

/**
 * The chain tracking engine: one runner per tracked chain (followed by one node at a time), the
 * fast path for new trackings, and the time-out sweeper.
 */
export function createChainEngine(common: Common, deps: ChainEngineDeps, options: ChainEngineOptions = {}): ChainEngine {
  const { logger, clock } = common
  const db = deps.database.db
  const metrics = createEngineMetrics(common.metrics.registry, {
    now: clock, chains: deps.chains.all().map((c) => c.config.name), countPending: () => countPendingTrackings(db),
  })
  const contexts = new Map<string, ChainContext>()
  // Leases: on PostgreSQL on a connection of their own, whose backend marks this node alive; a
  // release is announced on a channel so that a standby node takes over at once.
  const postgresUrl = deps.database.kind === 'postgres' ? deps.database.url : null
  const leaseDb = postgresUrl ? openDedicatedConnection(postgresUrl, 'paywatch-lease') : db
  const holder = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`
  const leaseListener = postgresUrl
    ? createPgListener({
      url: postgresUrl, channel: LEASE_CHANNEL, logger, applicationName: 'paywatch-lease-listen',
      onNotification: (chain) => contexts.get(chain)?.lock.wake(),
      // Releases announced while the connection was down are gone: try every chain now.
      onReconnect: () => { for (const context of contexts.values()) context.lock.wake() },
    })
    : undefined

  for (const handle of deps.chains.all()) {
    const chain = handle.config
    const reader = createChainReader(handle.client)
    const evidence = createEvidenceReader(handle.client)
    const verdicts = createVerdicts({
      chain: chain.name, db, events: deps.events, clock, logger, metrics,
      isCanonical: async (number, hash) => (await reader.header(number))?.hash.toLowerCase() === hash.toLowerCase(),
    })
    const lock = chainLease({
      db: leaseDb, chain: chain.name, holder, exclusive: !postgresUrl, logger,
      ttlMs: options.leaseTtlMs, renewMs: options.leaseRenewMs, retryMs: options.lockRetryMs,
      notifyChannel: postgresUrl ? LEASE_CHANNEL : undefined,
    })
    let runner: ChainRunner | undefined
    const holds = (number: bigint, hash: string) => runner?.follower?.holds(number, hash)
    const successes = createSuccessWatcher({ chain: chain.name, db, events: deps.events, logger, metrics, holds })
    const processor = createChainProcessor({
      chain: chain.name, db, evidence, receipts: createReceiptSource(reader), verdicts, successes, metrics, logger, clock, holds,
      onBlockProcessed: options.onBlockProcessed,
    })
    runner = createChainRunner({ chain, db, reader, lock, logger, sink: processor.handle })
    const current = runner
    contexts.set(chain.name, {
      handle, reader, runner, lock,
      fastPath: {
        chain: chain.name, reader, evidence, verdicts, finality: createFinality(chain, reader, logger),
        followerHead: () => current.follower?.state.head?.number,
        exclusive: (work) => (current.follower ? current.exclusive(work) : work()),
      },
    })
  }

  // Fast path: checked at once, retried with backoff while the RPC fails, a few at a time.
  const concurrency = options.fastPathConcurrency ?? 8
  let active = 0
  const waiting: (() => void)[] = []
  const retries = new Set<NodeJS.Timeout>()
  let stopped = false

  const withSlot = async <T>(work: () => Promise<T>): Promise<T> => {
    if (active >= concurrency) await new Promise<void>((resolve) => waiting.push(resolve))
    active++
    try {
      return await work()
    } finally {
      active--
      waiting.shift()?.()
    }
  }

  const check = async (tracking: Tracking, attempt = 0): Promise<void> => {
    const context = contexts.get(tracking.blockchain)
    if (!context || stopped || tracking.status !== 'pending') return
    const log = logger.child({ chain: tracking.blockchain, tracking: tracking.id })
    try {
      const result = await withSlot(() => checkNewTracking(context.fastPath, tracking))
      log.debug({ result }, 'new tracking checked')
    } catch (error) {
      if (error instanceof NonRetryableChainError) {
        log.error(failureFields(error), 'new tracking could not be checked; the blocks to come will judge it')
        return
      }
      const delay = Math.min(60_000, 1_000 * 2 ** attempt)
      const age = clock().getTime() - tracking.createdAt.getTime()
      if (age > common.config.trackingTimeoutSec * 1000) return
      log.warn({ ...failureFields(error), retryInMs: delay }, 'new tracking check failed; retrying')
      const timer = setTimeout(() => {
        retries.delete(timer)
        void track(findPendingTracking(db, tracking.id)
          .then((fresh) => (fresh ? check(fresh, attempt + 1) : undefined))
          .catch((err: unknown) => log.warn({ err }, 'could not re-read the tracking for its check')))
      }, delay)
      timer.unref()
      retries.add(timer)
    }
  }
  /** Checks under way, awaited on stop so that none writes to a closed database. */
  const inFlight = new Set<Promise<void>>()
  const track = (work: Promise<void>) => {
    inFlight.add(work)
    void work.finally(() => inFlight.delete(work))
    return work
  }
  const onTracked = (tracking: Tracking) => void track(check(tracking))

  const sweep = () => sweepTimedOut({
    db, clock, events: deps.events, logger, timeoutSec: common.config.trackingTimeoutSec,
    onCompleted: (chain) => metrics.completed(chain, 'failed', 'TRACKING_TIMED_OUT'),
  })
  let sweeper: NodeJS.Timeout | undefined

  return {
    async start() {
      // A graceful stop hands the chains over first, before the HTTP API and the rest wind down.
      common.shutdown.signal.addEventListener('abort', () => {
        for (const context of contexts.values()) void context.runner.resign()
      }, { once: true })
      deps.events.on('tracked', onTracked)
      await leaseListener?.start()
      for (const context of contexts.values()) context.runner.start()
      const interval = options.sweepIntervalMs ?? Math.min(60_000, common.config.trackingTimeoutSec * 100)
      const sweepNow = () => void sweep().catch((error: unknown) => logger.warn({ err: error }, 'time-out sweep failed'))
      sweepNow()
      sweeper = setInterval(sweepNow, interval)
      sweeper.unref()
    },
    async stop() {
      stopped = true
      deps.events.off('tracked', onTracked)
      clearInterval(sweeper)
      for (const timer of retries) clearTimeout(timer)
      await Promise.all([...contexts.values()].map((context) => context.runner.stop()))
      await Promise.allSettled([...inFlight])
      await leaseListener?.stop()
      if (leaseDb !== db) await leaseDb.destroy()
    },
    async readiness() {
      const probed = new Map<string, ChainReadiness>()
      const needProbe = [...contexts.values()].some((c) => !c.runner.follower?.state.head)
      if (needProbe) for (const entry of await deps.fallbackReadiness()) probed.set(entry.name, entry)
      const nowSeconds = clock().getTime() / 1000
      return [...contexts.values()].map(({ handle, runner }): ChainReadiness => {
        const name = handle.config.name
        if (runner.status === 'disabled') return { name, ok: false, error: 'the RPC serves another network' }
        const state = runner.follower?.state
        if (!state?.head) return probed.get(name) ?? { name, ok: false, error: 'not probed' }
        // Ready while the last sync succeeded; an idle chain (no new blocks) is not unhealthy.
        return {
          name,
          ok: state.lastError === undefined,
          head: state.head.number.toString(),
          headAgeSeconds: Math.max(0, Math.round(nowSeconds - Number(state.head.timestamp))),
          ...(state.lastError ? { error: state.lastError } : {}),
        }
      })
    },
    sweep,
    async syncNow() {
      await Promise.all([...contexts.values()].map((context) => context.runner.syncNow()))
    },
    check: (tracking) => track(check(tracking)),
    runner: (chain) => contexts.get(chain)?.runner,
  }
}
