import { BaseError, HttpRequestError, RpcRequestError } from 'viem'
import type { Logger } from 'pino'
import type { Clock } from '../common/clock.ts'
import type { ProviderReadiness } from '../common/readiness.ts'
import type { RpcAttempt } from './rpc-attempt.ts'
import { LatencyWindow } from './hedge-delay.ts'
import type { ProviderMetrics } from './provider-metrics.ts'
import { redactedUrl } from './provider-url.ts'
import { retryAfterOf, rpcFailureFields } from './rpc-failure.ts'

/** What a provider was found to offer at start (probed), shown in /readyz. */
export type Capability = 'eth_getBlockReceipts' | 'debug_traceTransaction' | 'trace_transaction'

/**
 * - `unknown`: not heard from yet; `ok`: answering at the head;
 * - `lagging`: answering, more than one block behind the highest head seen;
 * - `failing`: its last requests failed; `rate-limited`: it asked us to wait (429, Retry-After);
 * - `sitting-out`: it contradicted other providers' evidence and is asked last for a while;
 * - `refused`: it serves another chain (chain id or early block hash): never asked again.
 */
export type ProviderState = 'unknown' | 'ok' | 'lagging' | 'failing' | 'rate-limited' | 'sitting-out' | 'refused'

/** One provider as /readyz shows it (URL redacted). */
export type ProviderView = ProviderReadiness & { state: ProviderState }

export interface Provider {
  readonly index: number
  readonly url: string
  /** The URL without path or query (they may hold an API key). */
  readonly label: string
  head: bigint | undefined
  capabilities: Set<Capability>
  refused: string | undefined
}

/** Failures in a row that make a provider `failing`. */
const FAILING_AFTER = 3
/**
 * How old a provider's last shown head may be before its distance to the best head counts as lag by
 * itself. Heads are shown at different moments (one provider pushes newHeads, another is probed every
 * few seconds), so a head is compared with the best head of the moment it was shown; only a head that
 * has not been shown again for this long is compared with the best head of now.
 */
const HEAD_FRESH_MS = 15_000
/**
 * Healthy HTTP providers are asked before WebSocket ones, whatever their latency: a WebSocket carries
 * every request over one socket, and a node that leaves Nagle on (Anvil) delays answers to parallel
 * requests by ~40 ms each, which a single request's latency does not show. Listing an HTTP and a
 * WebSocket URL of one node sends requests over HTTP and takes newHeads from the WebSocket.
 */
const WEB_SOCKET_PENALTY = 1e4
/** How long a provider that contradicted the others is asked last. */
export const SIT_OUT_MS = 60_000
/** Weight of the newest request in the latency and error averages. */
const EWMA = 0.2

export interface ProviderPoolDeps {
  chain: string
  urls: string[]
  /** Per URL: at most this many requests per second (null: no limit). */
  rps: (number | null)[]
  clock: Clock
  logger: Logger
  metrics?: ProviderMetrics
}

/**
 * The providers of one chain and what is known of each: head, capabilities, recent latency and
 * errors, request budget, whether it was refused or sits out. The failover transport asks it in
 * which order to try them (fastest and healthiest first), whether one is behind a block, and
 * waits on each provider's budget; the engine reads it for readiness and quorum.
 */
export class ProviderPool {
  readonly chain: string
  readonly providers: Provider[]
  readonly #deps: ProviderPoolDeps
  readonly #log: Logger
  readonly #stats: {
    latencyMs: number
    errorRate: number
    failuresInRow: number
    notBefore: number
    waitUntil: number
    sitOutUntil: number
    /** When its head was last shown, and how far behind the best head it was then. */
    headNotedAt: number
    lagWhenNoted: bigint
  }[]
  readonly #buckets: { rps: number | null; tokens: number; at: number }[]
  readonly #states: ProviderState[]
  readonly #webSocket: boolean[]
  readonly #latencies: LatencyWindow[]

  constructor(deps: ProviderPoolDeps) {
    this.#deps = deps
    this.chain = deps.chain
    this.#log = deps.logger.child({ chain: deps.chain })
    this.providers = deps.urls.map((url, index) => ({
      index,
      url,
      label: redactedUrl(url),
      head: undefined,
      capabilities: new Set(),
      refused: undefined,
    }))
    this.#stats = deps.urls.map(() => ({
      latencyMs: 0,
      errorRate: 0,
      failuresInRow: 0,
      notBefore: 0,
      waitUntil: 0,
      sitOutUntil: 0,
      headNotedAt: 0,
      lagWhenNoted: 0n,
    }))
    this.#buckets = deps.urls.map((_, i) => ({ rps: deps.rps[i] ?? null, tokens: deps.rps[i] ?? 0, at: 0 }))
    this.#states = deps.urls.map(() => 'unknown')
    this.#webSocket = deps.urls.map((url) => /^wss?:/i.test(url))
    this.#latencies = deps.urls.map(() => new LatencyWindow())
  }

  /** How long a read waits for provider `i` before the next provider is asked too (its recent p90). */
  hedgeDelayMs(i: number): number {
    return this.#latencies[i]!.hedgeDelayMs()
  }

  /** A read to provider `i` was slow: the next provider was asked too (counted per slow provider). */
  hedged(i: number): void {
    this.#deps.metrics?.hedge(this.chain, this.providers[i]!.label)
  }

  #now(): number {
    return this.#deps.clock().getTime()
  }

  /** The highest head any provider that is not refused has shown. */
  bestHead(): bigint | undefined {
    let best: bigint | undefined
    for (const p of this.providers) if (!p.refused && p.head !== undefined && (best === undefined || p.head > best)) best = p.head
    return best
  }

  /** Providers not refused (they may be failing for now). */
  serving(): Provider[] {
    return this.providers.filter((p) => !p.refused)
  }

  /**
   * The order to ask them in: usable providers by recent latency weighed by errors, then those
   * behind the highest head, then those that sit out, asked us to wait, or keep failing; refused
   * providers never.
   */
  order(): number[] {
    const at = this.#now()
    const best = this.bestHead()
    const score = (i: number) => {
      const s = this.#stats[i]!
      const lagging = this.#lagging(i, best, at)
      const penalty = s.sitOutUntil > at || s.notBefore > at || s.failuresInRow >= FAILING_AFTER ? 1e9 : lagging ? 1e6 : 0
      return penalty + (this.#webSocket[i]! ? WEB_SOCKET_PENALTY : 0) + (s.latencyMs + 1) * (1 + 10 * s.errorRate)
    }
    return this.serving()
      .map((p) => p.index)
      .sort((a, b) => score(a) - score(b) || a - b)
  }

  /** Whether provider `i` is known to be behind `block` (it has not reached it: do not ask it). */
  behind(i: number, block: bigint): boolean {
    const head = this.providers[i]!.head
    return head !== undefined && head < block
  }

  /**
   * Waits until provider `i` may be sent one more request: its `Retry-After` has passed and its
   * budget (rps) allows it. False when it asked for a longer pause than one request should wait
   * (`longestWaitMs`): ask another provider, or fail this request (the caller retries later).
   */
  async admit(i: number, longestWaitMs = 5_000): Promise<boolean> {
    const bucket = this.#buckets[i]!
    for (;;) {
      // Checked again after every wait: a 429 may have come back meanwhile.
      const askedMs = this.#stats[i]!.waitUntil - performance.now()
      if (askedMs > longestWaitMs) return false
      if (askedMs > 0) {
        await new Promise((resolve) => setTimeout(resolve, askedMs))
        continue
      }
      const rps = bucket.rps
      if (rps === null) return true
      const now = performance.now()
      bucket.tokens = Math.min(rps, bucket.tokens + ((now - bucket.at) / 1000) * rps)
      bucket.at = now
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1
        return true
      }
      await new Promise((resolve) => setTimeout(resolve, Math.ceil(((1 - bucket.tokens) / rps) * 1000)))
    }
  }

  /** Every request sent to provider `i`: latency, errors, 429s and their `Retry-After`, metrics. */
  observe(i: number, attempt: RpcAttempt): void {
    const s = this.#stats[i]!
    const limited = !attempt.ok && isRateLimited(attempt.error)
    s.latencyMs = s.latencyMs === 0 ? attempt.durationMs : s.latencyMs * (1 - EWMA) + attempt.durationMs * EWMA
    s.errorRate = s.errorRate * (1 - EWMA) + (attempt.ok ? 0 : EWMA)
    s.failuresInRow = attempt.ok ? 0 : s.failuresInRow + 1
    if (attempt.ok) this.#latencies[i]!.add(attempt.durationMs)
    if (limited) {
      const asked = retryAfterOf(attempt.error, this.#now())
      s.notBefore = this.#now() + (asked ?? 1_000)
      // The wait itself runs on the monotonic clock: a test's frozen clock must not hold requests forever.
      s.waitUntil = performance.now() + (asked ?? 1_000)
    }
    // A request answered after a 429 was sent before it: the pause asked for still runs.
    this.#deps.metrics?.request(this.chain, this.providers[i]!.label, attempt.ok, limited, attempt.durationMs / 1000)
    if (!attempt.ok && s.failuresInRow === 1 && !limited) {
      // One line per failure streak, no stack: a provider having a bad moment is expected.
      this.#log.warn(
        { provider: this.providers[i]!.label, method: attempt.method, ...rpcFailureFields(attempt.error) },
        'RPC request failed',
      )
    }
    this.refresh()
  }

  /** Provider `i` showed `head` (a `latest` block, `eth_blockNumber`, a probe). */
  noteHead(i: number, head: bigint): void {
    const p = this.providers[i]!
    if (p.head === undefined || head > p.head) p.head = head
    const s = this.#stats[i]!
    const best = this.bestHead()!
    s.headNotedAt = this.#now()
    s.lagWhenNoted = best - p.head
    this.refresh()
  }

  /** Provider `i`'s head as a probe just read it (it may have gone back: a node restarted, a reorg). */
  setHead(i: number, head: bigint): void {
    this.providers[i]!.head = head
    this.refresh()
  }

  /** Provider `i` serves another chain: never asked again. Logged once, as an error naming its URL. */
  refuse(i: number, reason: string): void {
    const p = this.providers[i]!
    if (p.refused) return
    p.refused = reason
    this.#log.error({ provider: p.label }, `RPC provider ${p.label} refused: ${reason}`)
    this.refresh()
  }

  /** Provider `i` contradicted the agreeing providers: counted, and asked last for a while. */
  disagreed(i: number): void {
    this.#stats[i]!.sitOutUntil = this.#now() + SIT_OUT_MS
    this.#deps.metrics?.disagreement(this.chain, this.providers[i]!.label)
    this.refresh()
  }

  /**
   * Provider `i` disagreed with another provider and no quorum says which one is right: counted,
   * not sent to sit out (the one telling the truth may be among them).
   */
  disputed(i: number): void {
    this.#deps.metrics?.disagreement(this.chain, this.providers[i]!.label)
  }

  stateOf(i: number): ProviderState {
    const p = this.providers[i]!
    const s = this.#stats[i]!
    const at = this.#now()
    if (p.refused) return 'refused'
    if (s.sitOutUntil > at) return 'sitting-out'
    if (s.notBefore > at) return 'rate-limited'
    if (s.failuresInRow >= FAILING_AFTER) return 'failing'
    const best = this.bestHead()
    if (p.head === undefined || best === undefined) return 'unknown'
    return this.#lagging(i, best, at) ? 'lagging' : 'ok'
  }

  /** More than one block behind the best head: when its head was shown, or now if that is long ago. */
  #lagging(i: number, best: bigint | undefined, at: number): boolean {
    const head = this.providers[i]!.head
    if (best === undefined || head === undefined || best - head <= 1n) return false
    const s = this.#stats[i]!
    return s.lagWhenNoted > 1n || at - s.headNotedAt > HEAD_FRESH_MS
  }

  /** Recomputes every provider's state: one log line per change, and the head-lag gauge. */
  refresh(): void {
    const best = this.bestHead()
    for (const p of this.providers) {
      const state = this.stateOf(p.index)
      if (best !== undefined && p.head !== undefined) this.#deps.metrics?.headLag(this.chain, p.label, Number(best - p.head))
      const before = this.#states[p.index]!
      if (state === before) continue
      this.#states[p.index] = state
      if (before === 'unknown' && state === 'ok') continue
      const line = { provider: p.label, from: before, to: state }
      if (state === 'ok' || state === 'unknown') this.#log.info(line, 'RPC provider state changed')
      else if (state !== 'refused') this.#log.warn(line, 'RPC provider state changed')
    }
  }

  view(): ProviderView[] {
    const best = this.bestHead()
    return this.providers.map((p) => ({
      url: p.label,
      head: p.head === undefined ? null : p.head.toString(),
      lag: p.head === undefined || best === undefined ? null : Number(best - p.head),
      capabilities: [...p.capabilities].sort(),
      state: this.stateOf(p.index),
    }))
  }
}

/** HTTP 429, or a JSON-RPC rate-limit code (-32005 standard, -32007 QuickNode). */
export function isRateLimited(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false
  return (
    error.walk(
      (e) =>
        (e instanceof HttpRequestError && e.status === 429) ||
        (e instanceof RpcRequestError && (e.code === -32005 || e.code === -32007 || e.status === 429)),
    ) !== null
  )
}
