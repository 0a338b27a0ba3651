import { EventEmitter } from 'node:events'
import type { Tracking } from '../domain/tracking.ts'

/**
 * In-process events about trackings, for subsystems that react at once (the chain engine checks a
 * new tracking without waiting for the next block).
 */
export interface TrackingEventMap {
  /** A tracking was created, or a trace got its transaction. */
  tracked: [tracking: Tracking]
}

export type TrackingEvents = EventEmitter<TrackingEventMap>

export const createTrackingEvents = (): TrackingEvents => new EventEmitter<TrackingEventMap>()
