import type { Clock } from '../common/clock.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { claimDueDeliveries, postponeDeliveries, type ClaimedDelivery } from '../store/deliveries.ts'
import { endpointUrlOf } from '../domain/endpoint-url.ts'
import { pauseClaimedDeliveries } from '../store/endpoint-health.ts'
import { endpointKey } from '../store/webhook-endpoints.ts'
import type { EndpointRegistry } from './endpoint-registry.ts'
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
  /**
   * Hands deliveries this worker holds already (inserted under its lease by a verdict's transaction) to
   * `dispatch`, within the same per-host shares as claimed ones.
   */
  place(claimed: ClaimedDelivery[], now: Date): Promise<{ overflowed: boolean }>
  /** An attempt to `host` ended: true when the host had overflowed and has now worked off half its share. */
  relieved(host: string): boolean
}

/**
 * The unit of fairness and of the per-endpoint limit: the account and the callback's scheme://host[:port]
 * (docs/api.md §8).
 */
export const deliveryEndpointKey = (delivery: ClaimedDelivery): string =>
  endpointKey(delivery.tracking.accountId, endpointUrlOf(delivery.tracking.callback) ?? '')

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
  /** HTTP attempts in flight at once to one endpoint. */
  perHost: number
  /** Disabled endpoints: their deliveries are paused instead of attempted. */
  endpoints?: EndpointRegistry
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
    const { overflowed } = await place(claimed, now)
    return { claimed: claimed.length, full: claimed.length === limit && !overflowed }
  }

  async function place(claimed: ClaimedDelivery[], now: Date): Promise<{ overflowed: boolean }> {
    const paused = await pauseDisabled(claimed, now)
    const overflow = new Map<string, ClaimedDelivery[]>()
    for (const delivery of claimed) {
      if (held.has(delivery.id) || paused.has(delivery.id)) continue // still ours (its lease was renewed late), or paused
      const host = deliveryEndpointKey(delivery)
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
    return { overflowed: overflow.size > 0 }
  }

  async function pauseDisabled(claimed: ClaimedDelivery[], now: Date): Promise<Set<string>> {
    if (!deps.endpoints || claimed.length === 0) return new Set()
    const disabled = await deps.endpoints.disabled()
    if (disabled.size === 0) return new Set()
    const items = claimed
      .filter((d) => !held.has(d.id) && disabled.has(deliveryEndpointKey(d)))
      .map((d) => ({ id: d.id, accountId: d.tracking.accountId, url: endpointUrlOf(d.tracking.callback) ?? '' }))
    return pauseClaimedDeliveries(db, claim, items, now)
  }

  return {
    claimDue,
    place,
    relieved(host) {
      if (!saturated.has(host) || pipeline.load(host) >= maxHeldPerHost / 2) return false
      saturated.delete(host)
      return true
    },
  }
}
