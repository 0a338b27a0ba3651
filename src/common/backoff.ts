/**
 * How long to wait after consecutive failures: the n-th failure in a row waits `delaysMs[n - 1]`
 * (the last entry is the ceiling, repeated while failures go on), spread by ± `jitter` (a share of
 * the delay) so that many waiters do not retry in step.
 */
export interface BackoffPolicy {
  readonly delaysMs: readonly number[]
  readonly jitter: number
}

/**
 * Every backoff of the service, in one place (one table, named by what waits): a retry site picks
 * its policy here instead of writing its own `min(cap, base * 2 ** n)`.
 */
export const backoffPolicies = {
  /**
   * One RPC request after a transient failure (timeout, dropped connection, 5xx, 429, -32603,
   * -32005): retried within the caller's work, so that one failing request out of many does not
   * throw away what the others did.
   */
  rpcRequest: { delaysMs: [50, 150, 400, 1_000], jitter: 0.5 },
  /** An endpoint that keeps failing is asked last for this long (several URLs per chain). */
  endpointCooldown: { delaysMs: [250, 500, 1_000, 2_000, 4_000, 8_000, 15_000, 30_000, 60_000], jitter: 0 },
  /** The chain follower after a sync that failed without processing a block; reset by progress. */
  chainSync: { delaysMs: [250, 500, 1_000, 2_000, 5_000], jitter: 0.2 },
  /** A chain runner whose whole leadership round failed (not a sync: the lease, the database): restarts after this. */
  chainRunnerRestart: { delaysMs: [1_000], jitter: 0 },
  /**
   * A new tracking's fast-path check while the RPC fails: doubling from 1 s up to a minute, until
   * the tracking times out (the blocks to come judge it anyway).
   */
  fastPathCheck: { delaysMs: [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000], jitter: 0 },
  /**
   * A tracking whose providers disagree on its evidence, no quorum among them: its evidence is
   * checked again after this pause (not on every block), doubling from 5 s up to a minute while
   * the disagreement lasts.
   */
  quorumDispute: { delaysMs: [5_000, 10_000, 20_000, 40_000, 60_000], jitter: 0.2 },
  /** A node that does not hold a chain's lease asks for it again after this (sooner when told it was released). */
  leaseRetry: { delaysMs: [1_000], jitter: 0 },
  /** A lost `newHeads` WebSocket subscription is made again after this; the follower polls meanwhile. */
  headResubscribe: { delaysMs: [5_000], jitter: 0 },
  /** A PostgreSQL LISTEN connection that failed or was lost: doubling from 200 ms up to 10 s. */
  listenReconnect: { delaysMs: [200, 400, 800, 1_600, 3_200, 6_400, 10_000], jitter: 0 },
} as const satisfies Record<string, BackoffPolicy>

export interface Backoff {
  /** Failures in a row so far. */
  readonly failures: number
  /** Counts one more failure and returns the pause before the next attempt (at least `atLeastMs`). */
  next(atLeastMs?: number): number
  /** Progress was made: the next failure starts from the first delay again. */
  reset(): void
}

/** `random` returns [0, 1) like Math.random (tests pass a fixed one). */
export function createBackoff(policy: BackoffPolicy, random: () => number = Math.random): Backoff {
  let failures = 0
  return {
    get failures() {
      return failures
    },
    next(atLeastMs = 0) {
      failures++
      return Math.max(atLeastMs, delayFor(policy, failures, random))
    },
    reset() {
      failures = 0
    },
  }
}

/** The pause after the `failures`-th failure in a row (1 = the first), jitter included. */
export function delayFor(policy: BackoffPolicy, failures: number, random: () => number = Math.random): number {
  const base = policy.delaysMs[Math.min(Math.max(1, failures), policy.delaysMs.length) - 1] ?? 0
  return Math.round(base + base * policy.jitter * (2 * random() - 1))
}

/**
 * The pause a `Retry-After` header asks for (RFC 9110 §10.2.3: delta-seconds or an HTTP date), in ms;
 * undefined if absent or unreadable. The one reading of the header: RPC answers (src/chain) and callback
 * receivers' answers (src/callbacks/classify.ts) alike. `now` (epoch ms) comes from the caller's clock: an
 * HTTP date is relative to it.
 */
export function retryAfterMs(value: string | null | undefined, now: number): number | undefined {
  const text = value?.trim()
  if (!text) return undefined
  if (/^\d+$/.test(text)) return Number(text) * 1000
  // An HTTP date names its day and month; Date.parse alone would read "1.5" as a date.
  if (!/[A-Za-z]{3}/.test(text)) return undefined
  const date = Date.parse(text)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}
