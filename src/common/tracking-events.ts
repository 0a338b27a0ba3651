import { EventEmitter } from 'node:events'
import type { Tracking } from '../domain/tracking.ts'

/**
 * In-process events about trackings. Subsystems react at once (the chain engine checks a new
 * tracking without waiting for the next block; the widget channel forwards progress and releases);
 * the widget channel also carries them across nodes (PostgreSQL LISTEN/NOTIFY).
 */
export interface TrackingEventMap {
  /** A tracking was created, or a trace got its transaction. */
  tracked: [tracking: Tracking]
  /** A matching transaction is waiting for confirmations or finality. */
  progress: [event: { tracking: Tracking; required: number; passed: number }]
  /**
   * A verdict is about to be written: the tracking as it will read once written. Only for work done
   * ahead (signing its callback body while the transaction runs); it may not land, so nothing is sent on it.
   */
  completing: [tracking: Tracking]
  /** The tracking became success or failed (already written, with its delivery row). */
  completed: [tracking: Tracking]
  /** The waiting user was released (callback answered 200, or POST /v2/payments/release). */
  released: [tracking: Tracking]
  /**
   * A successful tracking's paying transaction left the canonical chain: its block was replaced
   * before it was final. The tracking stays `success` (final); this is the news of it, once per block.
   */
  reverted: [event: RevertedSuccess]
  /** A reverted success's transaction was mined again and reached the tracking's commitment. */
  reconfirmed: [event: { tracking: Tracking; sent: boolean }]
}

export interface RevertedSuccess {
  /** The tracking as stored (still `success`). */
  tracking: Tracking
  /** The paying transaction, lower-case. */
  transaction: string
  /** The block it was in, which is no longer canonical. */
  blockNumber: bigint
  blockHash: string
  /** Its `payment.reverted` callback goes out (the integration opted in; docs/api.md §8), else it is only recorded. */
  sent?: boolean
}

export type TrackingEvents = EventEmitter<TrackingEventMap>

export const createTrackingEvents = (): TrackingEvents => new EventEmitter<TrackingEventMap>()
