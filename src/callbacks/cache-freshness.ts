import type { DatabaseHandle } from '../store/infrastructure/database.ts'

/** Where other nodes share the database: what they change (a rotated secret, a disabled endpoint) is read within a second. */
export const SHARED_FRESH_MS = 1000

/**
 * How long the worker uses what it read of webhook secrets and disabled endpoints before reading them
 * again. On the embedded database this process is the only writer (the data folder is locked), and every
 * change passes through it and tells the cache at once, so it is read again only after minutes: one read less
 * per paying block on the path from its commit to its callbacks.
 */
export const freshMsFor = (kind: DatabaseHandle['kind']): number => (kind === 'pglite' ? 5 * 60_000 : SHARED_FRESH_MS)

/**
 * How often the delivery worker asks the database for due deliveries when nothing woke it. Every new
 * delivery of this process wakes it (a verdict's hand-off, a redelivery, a reversal event, an endpoint
 * enabled), so the poll finds retries falling due and leases run out. On the embedded database no other
 * node adds any: every 2 s (a retry waits 15 s and more, with up to 30 s of jitter), where the claim's
 * statement cost ~4 ms of the main thread twice a second (`bench:peers`). Where nodes share the database,
 * every 500 ms.
 */
export const claimPollMsFor = (kind: DatabaseHandle['kind']): number => (kind === 'pglite' ? 2_000 : 500)
