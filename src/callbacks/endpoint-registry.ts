import { performance } from 'node:perf_hooks'
import type { Db } from '../store/infrastructure/database.ts'
import { disabledEndpointKeys } from '../store/webhook-endpoints.ts'
import { SHARED_FRESH_MS } from './cache-freshness.ts'

/**
 * This node's view of the disabled endpoints (docs/api.md §8), read again after `freshMs` (cache-freshness.ts): a
 * claim checks its deliveries against it and hands those of disabled endpoints to the database, which
 * pauses them only when the endpoint is still disabled there (so a stale view never pauses a delivery
 * of an endpoint enabled meanwhile).
 */
export interface EndpointRegistry {
  disabled(): Promise<Set<string>>
  /** Disabled here just now. */
  markDisabled(key: string): void
  /** Enabled (or anything changed): read again on the next claim. */
  invalidate(): void
}

export function createEndpointRegistry(db: Db, freshMs: number = SHARED_FRESH_MS): EndpointRegistry {
  let read: { at: number; value: Promise<Set<string>> } | undefined
  return {
    disabled() {
      if (!read || performance.now() - read.at >= freshMs) {
        const value = disabledEndpointKeys(db)
        value.catch(() => (read = undefined))
        read = { at: performance.now(), value }
      }
      return read.value
    },
    markDisabled(key) {
      void read?.value.then(
        (keys) => keys.add(key),
        () => undefined,
      )
    },
    invalidate() {
      read = undefined
    },
  }
}
