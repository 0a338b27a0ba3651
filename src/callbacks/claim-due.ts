import type { Clock } from '../common/clock.ts'
import type { Db } from '../store/database.ts'
import { claimDueDeliveries, postponeDeliveries, type ClaimedDelivery } from '../store/deliveries.ts'
import { hostKey } from './attempt-log.ts'
import type { HeldDeliveries } from './held-deliveries.ts'
import type { AttemptPipeline } from './pipeline.ts'

/** Deliveries per claim at most. */
export const CLAIM_BATCH = 100

export interface DueClaimer {
  /**
   * Claims as many due deliveries as there is room for and hands each to `dispatch`. `full`: more may
   * be due right now, so claim again once there is room (at once when there is).
   */
  claimDue(): Promise<{ claimed: number; full: boolean }>
  /** An attempt to `host` ended: true when the host had overflowed and has now worked off half its share. */
  relieved(host: string): boolean
}

/**
 * A host with more deliveries due than its share gets the rest postponed by about the time its share
 * takes, so other hosts keep being served.
 */
export function createDueClaimer(deps: {
  db: Db
  clock: Clock
  /** The worker's claim (lease owner) id. */
  claim: string
  leaseMs: number
  held: HeldDeliveries
  pipeline: AttemptPipeline
  /** Claimed and not yet recorded, overall and to one host. */
  maxHeld: number
  maxHeldPerHost: number
  /** HTTP attempts in flight at once to one host. */
  perHost: number
  dispatch(delivery: ClaimedDelivery, host: string): void
}): DueClaimer {
  const { db, clock, claim, held, pipeline, maxHeld, maxHeldPerHost } = deps
  /**
   * Hosts whose share overflowed in a claim: claiming again right away would only fetch and postpone
   * more of their rows, so the next claim waits until one of them has worked off half its share (or
   * for the poll, a completion or a redelivery).
   */
  const saturated = new Set<string>()

  async function claimDue(): Promise<{ claimed: number; full: boolean }> {
    saturated.clear()
    const limit = Math.min(maxHeld - held.size, CLAIM_BATCH)
    // A claim costs about the same for 5 rows as for 100: with plenty in hand, wait for room.
    if (limit <= 0 || (limit < CLAIM_BATCH / 2 && held.size >= CLAIM_BATCH)) return { claimed: 0, full: true }
    const now = clock()
    const claimed = await claimDueDeliveries(db, { now, leaseUntil: new Date(now.getTime() + deps.leaseMs), limit, claim })
    const overflow = new Map<string, ClaimedDelivery[]>()
    for (const delivery of claimed) {
      if (held.has(delivery.id)) continue // still ours (its lease was renewed late)
      const host = hostKey(delivery.tracking.callback)
      if (pipeline.load(host) < maxHeldPerHost) deps.dispatch(delivery, host)
      else if (overflow.has(host)) overflow.get(host)!.push(delivery)
      else overflow.set(host, [delivery])
    }
    for (const [host, deliveries] of overflow) {
      // Due again about when this host's share will have been worked off.
      const delayMs = Math.min(60_000, Math.max(100, (pipeline.meanMs(host) * pipeline.load(host)) / deps.perHost))
      await postponeDeliveries(
        db,
        deliveries.map((d) => ({ id: d.id, claim })),
        new Date(now.getTime() + delayMs),
      )
      saturated.add(host)
    }
    return { claimed: claimed.length, full: claimed.length === limit && overflow.size === 0 }
  }

  return {
    claimDue,
    relieved(host) {
      if (!saturated.has(host) || pipeline.load(host) >= maxHeldPerHost / 2) return false
      saturated.delete(host)
      return true
    },
  }
}
