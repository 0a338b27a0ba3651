import type { BlockHeader } from '../domain/block-window.ts'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import { createBlockFollower, type BlockFollower, type FollowerEvent, type WindowView } from './block-follower.ts'
import { backoffPolicies, createBackoff } from '../common/backoff.ts'
import type { ChainReader } from '../chain/chain-reader.ts'
import { createHeadSignal } from './head-signal.ts'
import { rpcFailureFields } from '../chain/rpc-failure.ts'
import type { LeaderLock } from './leader-lock.ts'
import type { ChainConfig } from '../config/chains.ts'
import { LeadershipLostError, type WriteFence } from '../store/chain-leases.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { logSyncFailure } from './sync-failure-log.ts'

export type RunnerStatus = 'standby' | 'verifying' | 'following' | 'disabled' | 'stopped'

export interface ChainRunner {
  readonly chain: ChainConfig
  readonly status: RunnerStatus
  /** The follower while this node follows the chain. */
  readonly follower: BlockFollower | undefined
  /** Whether the follower is woken by a live `newHeads` subscription (else it polls). */
  readonly headsSubscribed: boolean
  /** Runs `work` between two follower events (the fast path's final write). */
  exclusive<T>(work: () => Promise<T>): Promise<T>
  start(): void
  /** Stops taking the lead and hands the chain over now (the follower winds down in `stop`). */
  resign(): Promise<void>
  stop(): Promise<void>
  /** Follows up to the RPC's head now (tests, benchmarks); false when this node does not follow. */
  syncNow(): Promise<boolean>
}

export interface ChainRunnerDeps {
  chain: ChainConfig
  db: Db
  reader: ChainReader
  lock: LeaderLock
  logger: Logger
  /** Handles the follower's events (called inside `exclusive`), writing under the lead's `fence`. */
  sink: (event: FollowerEvent, fence: WriteFence, window: WindowView) => Promise<'recorded' | void>
  /** The next block's header is known before the block is read (the processor starts its reads). */
  prepare?: (header: BlockHeader) => void
  /** Whether a payment's verdict waits for finality (the follower then reads the `finalized` tag at every head). */
  awaitsFinality?: () => boolean
  /** Longest pause between two syncs while a newHeads subscription is live (it may stall silently). */
  backstopMs?: number
  /** Jitter source of the pauses after failures (tests pass a fixed one). */
  random?: () => number
  /**
   * Checks that the providers serve the chain the stored progress belongs to (chain-identity.ts):
   * false when every one was refused; throws while none could be asked.
   */
  verifyIdentity: () => Promise<boolean>
}

/**
 * One chain on this node: waits for the chain's leadership (one node follows a chain at a time),
 * checks that the RPC serves the configured network, then follows it until stopped or until the
 * lead is lost (the lease lapsed, or a write was refused because another node took over: then it
 * stands by again). Other failures never end the loop: they are logged and retried with backoff.
 */
export function createChainRunner(deps: ChainRunnerDeps): ChainRunner {
  const { chain, logger } = deps
  const log = logger.child({ chain: chain.name })
  const stopController = new AbortController()
  let status: RunnerStatus = 'standby'
  let follower: BlockFollower | undefined
  let liveHeads: ReturnType<typeof createHeadSignal> | undefined
  let loop: Promise<void> | undefined
  let queue: Promise<unknown> = Promise.resolve()

  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work)
    queue = next.catch(() => {})
    return next
  }

  const pause = (ms: number, signal: AbortSignal) => sleep(ms, undefined, { signal }).catch(() => {})

  /** True when the RPC serves the configured chain; false (chain disabled) when it serves another. */
  const verify = async (signal: AbortSignal): Promise<boolean> => {
    const backoff = createBackoff(backoffPolicies.chainSync, deps.random)
    while (!signal.aborted) {
      try {
        if (await deps.verifyIdentity()) return true
        log.error('no RPC provider serves this chain: chain not followed')
        return false
      } catch (error) {
        const retryInMs = backoff.next()
        log.warn({ ...rpcFailureFields(error), retryInMs }, 'could not check the chain identity; retrying')
        await pause(retryInMs, signal)
      }
    }
    return false
  }

  const follow = async (signal: AbortSignal, fence: WriteFence) => {
    const current = createBlockFollower({
      chain,
      reader: deps.reader,
      db: deps.db,
      logger,
      fence,
      sink: (event, window) => exclusive(() => deps.sink(event, fence, window)),
      prepare: deps.prepare,
      finality: { awaited: deps.awaitsFinality },
      verifyIdentity: deps.verifyIdentity,
    })
    follower = current
    const heads = createHeadSignal({ wsUrl: chain.rpc.find((url) => url.startsWith('ws')), logger: log })
    liveHeads = heads
    const backstopMs = deps.backstopMs ?? Math.max(chain.pollingIntervalMs * 4, 10_000)
    const backoff = createBackoff(backoffPolicies.chainSync, deps.random)
    try {
      while (!signal.aborted) {
        const before = current.state.head
        try {
          const done = await current.sync(undefined, heads.takeAnnounced())
          backoff.reset()
          // Stopped at its per-sync limit while catching up: go on at once.
          if (!done) continue
        } catch (error) {
          // Another node leads now: nothing this node writes for the chain would land.
          if (error instanceof LeadershipLostError) return
          current.state.lastError = error instanceof Error ? error.message.split('\n')[0] : String(error)
          // Blocks processed before the failure are stored: a sync that advanced is progress, not a
          // failure streak, and goes on at once (a flaky provider must not make the follower wait longer and longer).
          const advanced = current.state.head !== undefined && current.state.head.hash !== before?.hash
          if (advanced) backoff.reset()
          const retryInMs = advanced ? 0 : backoff.next()
          logSyncFailure(log, error, { block: current.state.head?.number, retryInMs })
          if (retryInMs > 0) await pause(retryInMs, signal)
          continue
        }
        await heads.next(heads.subscribed ? backstopMs : chain.pollingIntervalMs, signal)
      }
    } finally {
      liveHeads = undefined
      await heads.stop()
      follower = undefined
    }
  }

  const run = async () => {
    const stop = stopController.signal
    const restarts = createBackoff(backoffPolicies.chainRunnerRestart, deps.random)
    while (!stop.aborted) {
      status = 'standby'
      const lead = await deps.lock.acquire(stop)
      if (!lead) break
      const signal = AbortSignal.any([stop, lead.lost])
      try {
        status = 'verifying'
        if (!(await verify(signal))) {
          if (signal.aborted) continue
          status = 'disabled'
          return
        }
        status = 'following'
        log.info('following the chain')
        await follow(signal, lead.fence)
        restarts.reset()
        if (!stop.aborted) log.warn('lost the chain lead; standing by')
      } catch (error) {
        log.error({ err: error }, 'chain runner failed; restarting')
        await pause(restarts.next(), stop)
      } finally {
        await deps.lock.release()
      }
    }
  }

  const resign = async () => {
    stopController.abort()
    // Handed over at once: a write still under way is refused by the fence, and the block it
    // belonged to is processed again by the next leader.
    await deps.lock.release()
  }

  return {
    chain,
    get status() {
      return status
    },
    get follower() {
      return follower
    },
    get headsSubscribed() {
      return liveHeads?.subscribed === true
    },
    exclusive,
    start() {
      loop ??= run().finally(() => {
        if (status !== 'disabled') status = 'stopped'
      })
    },
    resign,
    async stop() {
      await resign()
      await loop
      await queue
    },
    async syncNow() {
      const current = follower
      if (!current) return false
      while (!(await current.sync())) {
        /* catching up, one slice at a time */
      }
      return true
    },
  }
}
