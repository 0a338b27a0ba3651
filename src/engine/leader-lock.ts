import type { Logger } from 'pino'
import { backoffPolicies, delayFor } from '../common/backoff.ts'
import { createWakeSignal } from '../common/wake-signal.ts'
import { acquireLease, releaseLease, renewLease, type WriteFence } from '../store/chain-leases.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { monotonicClock, type MonotonicClock } from '../common/clock.ts'

/** This node leads the chain: `lost` aborts when the lead ends; every write is made under `fence`. */
export interface Lead {
  lost: AbortSignal
  fence: WriteFence
}

/**
 * Leadership of one chain among the nodes sharing a database: exactly one node follows a chain.
 * `acquire` resolves once this node leads (or `signal` aborts).
 */
export interface LeaderLock {
  acquire(signal: AbortSignal): Promise<Lead | undefined>
  /** Gives the lead up (graceful stop, or after losing it) and tells the waiting nodes. */
  release(): Promise<void>
  /** Another node released the chain: try to take it now rather than at the next poll. */
  wake(): void
}

export interface ChainLeaseOptions {
  /** Where the lease lives: a connection of its own on PostgreSQL (its backend pid marks the holder alive). */
  db: Db
  chain: string
  /** This node's id, unique per process. */
  holder: string
  /** The database belongs to this process alone (embedded): a lease left by an earlier run is taken over at once. */
  exclusive: boolean
  /** Lease duration, counted by the database's clock from each renewal. */
  ttlMs?: number
  /** How often the leader renews. */
  renewMs?: number
  /** How often a standby node tries to take the lease. */
  retryMs?: number
  /** NOTIFY channel told of a release (PostgreSQL). */
  notifyChannel?: string
  logger?: Logger
  /** Times the lease's validity on this node (injected in tests). */
  now?: MonotonicClock
}

export const DEFAULT_LEASE_TTL_MS = 10_000
export const DEFAULT_LEASE_RENEW_MS = 2_000
export const DEFAULT_LEASE_RETRY_MS = delayFor(backoffPolicies.leaseRetry, 1)

interface Held {
  fence: WriteFence
  controller: AbortController
  timer: NodeJS.Timeout
  /** Local time until which the lease surely holds: the last renewal's sending time plus the TTL. */
  validUntil: number
  renewing: boolean
}

/**
 * A renewed lease per chain (see `store/chain-leases.ts`). The leader renews every `renewMs`; when a
 * renewal finds the lease gone, or none succeeded for a whole TTL (the node froze, or lost the
 * database), `lost` aborts and the runner goes back to standby. The writes themselves are fenced by
 * the lease's token, so a node that has not noticed yet still cannot write after a take-over.
 */
export function chainLease(options: ChainLeaseOptions): LeaderLock {
  const { db, chain, holder } = options
  const ttlMs = options.ttlMs ?? DEFAULT_LEASE_TTL_MS
  const renewMs = options.renewMs ?? DEFAULT_LEASE_RENEW_MS
  const retryMs = options.retryMs ?? DEFAULT_LEASE_RETRY_MS
  const now = options.now ?? monotonicClock
  const log = options.logger?.child({ chain })
  let current: Held | undefined
  const retries = createWakeSignal()

  const lose = (held: Held, reason: string) => {
    if (current !== held) return
    current = undefined
    clearInterval(held.timer)
    log?.warn({ token: held.fence.token }, `chain lease lost: ${reason}`)
    held.controller.abort()
  }

  const renew = async (held: Held) => {
    if (now() > held.validUntil) return lose(held, 'not renewed within its duration')
    if (held.renewing) return
    held.renewing = true
    const sentAt = now()
    try {
      const renewed = await renewLease(db, held.fence, ttlMs)
      if (!renewed) return lose(held, 'expired or taken over by another node')
      held.validUntil = sentAt + ttlMs
      if (now() > held.validUntil) lose(held, 'renewed too late')
    } catch (error) {
      log?.warn({ err: error }, 'could not renew the chain lease')
      if (now() > held.validUntil) lose(held, 'not renewed within its duration')
    } finally {
      held.renewing = false
    }
  }

  return {
    async acquire(signal) {
      while (!signal.aborted) {
        const sentAt = now()
        try {
          const token = await acquireLease(db, chain, holder, { ttlMs, exclusive: options.exclusive })
          if (token !== undefined) {
            const fence = { chain, holder, token }
            if (signal.aborted) {
              await releaseLease(db, fence, options.notifyChannel).catch(() => {})
              return undefined
            }
            const held: Held = { fence, controller: new AbortController(), timer: undefined!, validUntil: sentAt + ttlMs, renewing: false }
            held.timer = setInterval(() => void renew(held), renewMs)
            held.timer.unref()
            current = held
            log?.info({ token }, 'chain lease acquired')
            return { lost: held.controller.signal, fence }
          }
        } catch (error) {
          log?.warn({ err: error }, 'could not try the chain lease')
        }
        await retries.sleep(retryMs, signal)
      }
      return undefined
    },
    async release() {
      const held = current
      if (!held) return
      current = undefined
      clearInterval(held.timer)
      held.controller.abort()
      await releaseLease(db, held.fence, options.notifyChannel).catch((error: unknown) =>
        log?.warn({ err: error }, 'could not release the chain lease; it expires by itself'),
      )
    },
    wake() {
      retries.wake()
    },
  }
}
