import { createMatchStore } from '../store/tracking-matches.ts'
import type { DeliveryHandoff } from '../store/deliveries.ts'
import type { Logger } from 'pino'
import { createChainReader, type ChainReader } from '../chain/chain-reader.ts'
import { createFinality } from '../chain/finality.ts'
import { createEvidenceReader } from '../chain/payment-evidence.ts'
import type { ChainHandle } from '../chain/registry.ts'
import type { Clock } from '../common/clock.ts'
import type { TrackingEvents } from '../common/tracking-events.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { createReceiptSource } from './block-evidence.ts'
import { fillIdentity } from '../store/nonceless-trackings.ts'
import { oweSearchFrom } from '../store/owed-checks.ts'
import { catchUpTrace, type CatchUpRange } from './trace-catch-up.ts'
import { createTraceSearch } from './trace-searches.ts'
import { createChainProcessor, type BlockProcessed } from './chain-processor.ts'
import { createChainRunner, type ChainRunner } from './chain-runner.ts'
import type { EngineMetrics } from './engine-metrics.ts'
import { searchPassedBlocks, type FastPathDeps } from './fast-path.ts'
import { sendRpcBatch } from '../chain/rpc-batch.ts'
import { numberToHex } from 'viem'
import type { LeaderLock } from './leader-lock.ts'
import { createIdentityCheck } from './chain-identity.ts'
import { createEvidenceQuorum } from './evidence-quorum.ts'
import { createProviderMonitor, type ProviderMonitor } from './provider-monitor.ts'
import { createSuccessWatcher } from './success-watch.ts'
import { createVerdicts } from './verdicts.ts'

/** Everything the engine keeps for one tracked chain. */
export interface ChainContext {
  handle: ChainHandle
  reader: ChainReader
  runner: ChainRunner
  lock: LeaderLock
  fastPath: FastPathDeps
  /** Heads, capabilities and identity of the chain's providers, probed in the background. */
  monitor: ProviderMonitor
}

export interface ChainContextDeps {
  handle: ChainHandle
  db: Db
  events: TrackingEvents
  clock: Clock
  logger: Logger
  metrics: EngineMetrics
  /** This node's delivery worker, handed the verdicts' callbacks as they commit. */
  deliveries?: DeliveryHandoff
  /** The chain's leadership (made by the lease channel, which knows the database). */
  lock: LeaderLock
  onBlockProcessed?: (info: BlockProcessed) => void
  /** Pause between two probes of every provider (heads, identity). */
  providerProbeMs?: number
}

/**
 * Wires one chain: its RPC readers, the verdicts and success watches, the block processor fed by
 * the runner's follower, and what the fast path needs to judge a new tracking between two blocks.
 */
export function createChainContext(deps: ChainContextDeps): ChainContext {
  const { handle, db, events, clock, logger, metrics, lock } = deps
  const chain = handle.config
  const reader = createChainReader(handle.client)
  const evidence = createEvidenceReader(handle.client)
  // The one writer of `tracking_matches` for this chain's verdicts and blocks.
  const matches = createMatchStore(db, clock)
  const quorum = chain.quorum > 1 ? createEvidenceQuorum({ handle, evidence, logger, clock }) : undefined
  const verdicts = createVerdicts({
    matches,
    chain: chain.name,
    db,
    events,
    clock,
    logger,
    metrics,
    isCanonical: async (number, hash) => (await reader.header(number))?.hash.toLowerCase() === hash.toLowerCase(),
    quorum,
    deliveries: deps.deliveries,
  })
  const successes = createSuccessWatcher({
    chain: chain.name,
    db,
    events,
    logger,
    metrics,
    clock,
    receipt: (hash) => reader.receipt(hash),
  })
  const receipts = createReceiptSource(reader)
  // Read on demand: the fast path's checks, and a block whose own payments wait for finality.
  const finality = createFinality(chain, reader, logger)
  // A trace matched by receiver in blocks passed without it: a new one (the fast path) or one whose match was dropped.
  const catchUp = async (tracking: Tracking, range: CatchUpRange) => {
    const outcome = await catchUpTrace({ chain: chain.name, db, reader, evidence, receipts, verdicts }, tracking, range)
    // Stopped short of its range: the rest is owed, and the follower goes on with it (fast-path-checks.ts `resume`).
    if (outcome.next !== undefined) await oweSearchFrom(db, tracking.id, chain.name, outcome.next)
    return outcome.judged
  }
  const processor = createChainProcessor({
    matches,
    chain: chain.name,
    db,
    catchUpTrace: catchUp,
    evidence,
    receipts,
    verdicts,
    successes,
    finality,
    metrics,
    logger,
    clock,
    onBlockProcessed: deps.onBlockProcessed,
    prepareQuorum: quorum && ((blockHash) => quorum.prepare(blockHash)),
  })
  const identity = createIdentityCheck({ handle, db, clock, logger })
  const current = createChainRunner({
    chain,
    db,
    reader,
    lock,
    logger,
    sink: processor.handle,
    prepare: processor.prepare,
    awaitsFinality: processor.awaitsFinality,
    verifyIdentity: () => identity.verify(),
  })
  const probeMs = deps.providerProbeMs ?? Math.max(chain.pollingIntervalMs, 5_000)
  const monitor = createProviderMonitor({
    handle,
    identity,
    logger,
    intervalMs: probeMs,
    quiet: () => {
      const syncedAt = current.follower?.state.syncedAt
      return current.headsSubscribed && syncedAt !== undefined && Date.now() - syncedAt < probeMs
    },
  })
  const fastPath: FastPathDeps = {
    chain: chain.name,
    reader,
    evidence,
    verdicts,
    finality,
    followerHead: () => current.follower?.state.head?.number,
    seenHead: () => current.follower?.state.seen,
    followerReached: (number) => current.follower?.reached(number) ?? Promise.resolve(false),
    transactionCounts: async (senders, block) => {
      const answers = await sendRpcBatch(
        chain.rpc,
        handle.client,
        senders.map((sender) => ({ method: 'eth_getTransactionCount', params: [sender, numberToHex(block)] })),
      )
      return answers.map((answer) => ('result' in answer && typeof answer.result === 'string' ? BigInt(answer.result) : null))
    },
    exclusive: (work) => (current.follower ? current.exclusive(work) : work()),
    fillIdentity: (tracking, sender, nonce) =>
      // A concurrent create took that identity first (unique violation): judged by its hash alone.
      fillIdentity(db, tracking.id, sender, nonce).catch((error: { code?: string }) => {
        if (error?.code === '23505') return undefined
        throw error
      }),
    catchUp,
    searchTrace: createTraceSearch({ db, search: (tracking, from) => searchPassedBlocks(fastPath, tracking, from) }),
  }
  return { handle, reader, runner: current, lock, monitor, fastPath }
}
