import { BaseError, createTransport, ExecutionRevertedError, RpcRequestError, type EIP1193RequestFn, type Transport } from 'viem'
import { backoffPolicies, createBackoff, delayFor, type BackoffPolicy } from '../common/backoff.ts'
import { systemClock, type Clock } from '../common/clock.ts'
import { walk } from '../common/errors.ts'
import { isMethodUnavailable, isTransient, RetryableChainError } from './errors.ts'
import type { ProviderPool } from './provider-pool.ts'
import type { RpcAttempt } from './rpc-attempt.ts'
import { retryAfterOf } from './rpc-failure.ts'
import { noteAnswerSource } from './answer-source.ts'

export type { RpcAttempt }

export interface FailoverOptions {
  onAttempt?: (attempt: RpcAttempt) => void
  /** Extra passes over every endpoint once all of them failed (default: one per step of `retryPolicy`). */
  retryRounds?: number
  /** Pauses between passes. */
  retryPolicy?: BackoffPolicy
  /** Jitter source (tests pass a fixed one). */
  random?: () => number
  /** Wall clock of cool-downs and `Retry-After` dates (the service's injected clock; tests pass their own). */
  clock?: Clock
  /**
   * No new pass starts once a request has taken this long: a provider that lets requests hang
   * until their timeout must not hold a caller (an API answer, a sync) for many timeouts in a row.
   */
  requestBudgetMs?: number
  /**
   * The chain's providers (ranking, request budgets, heads, refusals); `poolIndexes[i]` is the pool
   * index of `endpoints[i]` (default: the same index).
   */
  pool?: ProviderPool
  poolIndexes?: number[]
}

/** Lookups whose `null` means "this node does not have it (yet)", not "it does not exist": another node is asked. */
const lookups = new Set([
  'eth_getBlockByNumber',
  'eth_getBlockByHash',
  'eth_getTransactionByHash',
  'eth_getTransactionReceipt',
  'eth_getBlockReceipts',
])

/** The block a request is about, when it names one by number (not a tag). */
function blockAsked(method: string, params: unknown): bigint | undefined {
  if (method !== 'eth_getBlockByNumber' && method !== 'eth_getBlockReceipts') return undefined
  const first = Array.isArray(params) ? params[0] : undefined
  // A block hash (eth_getBlockReceipts also takes one) names no height.
  return typeof first === 'string' && first.startsWith('0x') && first.length < 66 ? BigInt(first) : undefined
}

/** The head a provider showed in its answer to a request for the latest block. */
function headShown(method: string, params: unknown, result: unknown): bigint | undefined {
  if (method === 'eth_blockNumber' && typeof result === 'string') return BigInt(result)
  const latest = Array.isArray(params) && params[0] === 'latest'
  const number = (result as { number?: unknown } | null)?.number
  if (method === 'eth_getBlockByNumber' && latest && typeof number === 'string') return BigInt(number)
  return undefined
}

/** Every provider of the chain was refused (it serves another chain): nothing can be asked. */
export class NoProviderError extends RetryableChainError {
  override name = 'NoProviderError'
  override readonly code: string = 'NO_PROVIDER'
  constructor() {
    super('no RPC provider serves this chain (every one was refused)')
  }
}

/** A `Retry-After` longer than this is not waited for inside one request: the caller's own backoff takes over. */
const longestInlineWaitMs = 5_000

/**
 * What a failed request says about the endpoint that answered it:
 * - `answer`: the node answered and another node would answer the same (a revert, bad params):
 *   no use asking elsewhere;
 * - `refused`: the node answered with an error of its own (method not offered, state pruned, block
 *   unknown yet): another URL may answer, and this one is not unhealthy;
 * - `endpoint`: the node failed (network, timeout, HTTP error, rate limit, internal error): cool it down.
 */
export type FailureKind = 'answer' | 'refused' | 'endpoint'

/** What one endpoint's attempt at a request gave. */
type Outcome = { kind: 'result'; result: unknown } | { kind: 'null' } | { kind: FailureKind; error: unknown }

export function classifyRpcFailure(error: unknown): FailureKind {
  const code = errorCode(error)
  const message = error instanceof Error ? error.message : String(error)
  if (code === 3 || ExecutionRevertedError.nodeMessage.test(message)) return 'answer'
  if (code === -32602) return 'answer'
  if (isMethodUnavailable(error)) return 'refused'
  if (isTransient(error)) return 'endpoint'
  const answered = error instanceof BaseError && error.walk((e) => e instanceof RpcRequestError) !== null
  return answered ? 'refused' : 'endpoint'
}

function errorCode(error: unknown): number | undefined {
  const coded = walk(error, (e) => typeof (e as { code?: unknown }).code === 'number') as { code: number } | null
  return coded?.code
}

/**
 * A viem transport over several RPC endpoints of one chain. Unlike viem's `fallback`, it remembers
 * which endpoints fail: a failing endpoint is cooled down (exponentially longer while it keeps
 * failing) and asked last, so a dead first URL costs one timeout, not one per request. When every
 * endpoint failed for a reason worth retrying (timeout, dropped connection, 5xx, 429, -32603,
 * -32005), it makes more passes after short jittered pauses (`backoffPolicies.rpcRequest`, at
 * least the `Retry-After` asked) before giving up; an answer that asking again cannot change
 * (a revert, invalid params) fails at once. Callers that must not lose work retry later on their own.
 */
export function failover(endpoints: Transport[], options: FailoverOptions = {}): Transport {
  const retryPolicy = options.retryPolicy ?? backoffPolicies.rpcRequest
  const retryRounds = options.retryRounds ?? retryPolicy.delaysMs.length
  const random = options.random ?? Math.random
  const clock = options.clock ?? systemClock
  const now = () => clock().getTime()
  /** `notBefore`: when the endpoint's last `Retry-After` ends. */
  const health = endpoints.map(() => ({ failures: 0, coolUntil: 0, notBefore: 0 }))

  const poolIndex = (i: number) => options.poolIndexes?.[i] ?? i
  const pool = options.pool
  const order = (): number[] => {
    const at = now()
    let indexes = endpoints.map((_, i) => i)
    if (pool) {
      // Ranked by the pool (refused providers left out), in the pool's order.
      const rank = new Map(pool.order().map((p, position) => [p, position]))
      indexes = indexes.filter((i) => rank.has(poolIndex(i))).sort((a, b) => rank.get(poolIndex(a))! - rank.get(poolIndex(b))!)
    }
    const ready = indexes.filter((i) => health[i]!.coolUntil <= at)
    const cooling = indexes.filter((i) => health[i]!.coolUntil > at).sort((a, b) => health[a]!.coolUntil - health[b]!.coolUntil)
    return [...ready, ...cooling]
  }

  const failed = (i: number, error: unknown) => {
    const failures = health[i]!.failures + 1
    const at = now()
    const asked = retryAfterOf(error, at)
    const notBefore = asked === undefined ? 0 : at + asked
    // Longer when the node asked for it.
    health[i] = { failures, coolUntil: Math.max(at + delayFor(backoffPolicies.endpointCooldown, failures, random), notBefore), notBefore }
  }

  return ({ chain, timeout }) => {
    const instances = endpoints.map((endpoint) => endpoint({ chain, retryCount: 0, timeout }))
    return createTransport({
      key: 'failover',
      name: 'Failover',
      type: 'failover',
      // Retries are ours (across endpoints); viem must not multiply them.
      retryCount: 0,
      request: (async (args: { method: string; params?: unknown }) => {
        let lastError: unknown
        // Per request: a short jittered pause between passes, so that a flaky provider costs a
        // moment, not the caller's whole batch of work.
        const pauses = createBackoff(retryPolicy, random)
        /** Asks endpoint `i` and records what its answer says about it. */
        const send = async (i: number): Promise<Outcome> => {
          const sent = performance.now()
          try {
            const result: unknown = await instances[i]!.request(args as never)
            health[i] = { failures: 0, coolUntil: 0, notBefore: 0 }
            const attempt: RpcAttempt = { method: args.method, endpoint: i, ok: true, durationMs: performance.now() - sent }
            options.onAttempt?.(attempt)
            pool?.observe(poolIndex(i), attempt)
            const head = pool ? headShown(args.method, args.params, result) : undefined
            if (head !== undefined) pool?.noteHead(poolIndex(i), head)
            // The answer itself carries who sent it (the quorum counts it as that provider's vote).
            noteAnswerSource(result, poolIndex(i))
            if ((result === null || result === undefined) && lookups.has(args.method)) return { kind: 'null' }
            return { kind: 'result', result }
          } catch (error) {
            const attempt: RpcAttempt = { method: args.method, endpoint: i, ok: false, error, durationMs: performance.now() - sent }
            options.onAttempt?.(attempt)
            pool?.observe(poolIndex(i), attempt)
            const kind = classifyRpcFailure(error)
            if (kind === 'endpoint') failed(i, error)
            return { kind, error }
          }
        }
        const started = performance.now()
        for (let round = 0; round <= retryRounds; round++) {
          if (round > 0) {
            if (performance.now() - started > (options.requestBudgetMs ?? Infinity)) break
            // Every endpoint asked to wait (429/503 with Retry-After): honour the shortest wait.
            const askedMs = Math.min(...health.map((h) => h.notBefore)) - now()
            if (askedMs > longestInlineWaitMs) break
            await new Promise((resolve) => setTimeout(resolve, pauses.next(askedMs)))
          }
          let onlyRefused = true
          let sawNull = false
          const candidates = order()
          if (candidates.length === 0) throw new NoProviderError()
          // A provider known to be behind the block asked is asked only after the others failed
          // (it may have reached it by now); its null says nothing about the block.
          const block = blockAsked(args.method, args.params)
          const isBehind = (i: number) => block !== undefined && pool !== undefined && pool.behind(poolIndex(i), block)
          const asked = [...candidates.filter((i) => !isBehind(i)), ...candidates.filter(isBehind)]
          // One provider at a time, in order; a read the provider asked last is slow to answer (past
          // its hedge delay, its recent p90) is also sent to the next one, and the first good answer wins.
          const hedging = pool !== undefined && !args.method.startsWith('eth_send')
          const inflight = new Map<number, Promise<{ i: number; outcome: Outcome }>>()
          let next = 0
          const launch = async (): Promise<number | undefined> => {
            while (next < asked.length) {
              const i = asked[next++]!
              // It asked for a longer pause (429 Retry-After) than this request waits: not sent.
              if (pool && !(await pool.admit(poolIndex(i)))) {
                onlyRefused = false
                continue
              }
              inflight.set(
                i,
                send(i).then((outcome) => ({ i, outcome })),
              )
              return i
            }
            return undefined
          }
          let newest = await launch()
          while (inflight.size > 0) {
            const delay = hedging && newest !== undefined && next < asked.length ? pool!.hedgeDelayMs(poolIndex(newest)) : undefined
            let timer: NodeJS.Timeout | undefined
            const slow = new Promise<'slow'>((resolve) => {
              if (delay !== undefined) timer = setTimeout(() => resolve('slow'), delay)
            })
            const first = await Promise.race([...inflight.values(), slow])
            clearTimeout(timer)
            if (first === 'slow') {
              const slowOne = newest!
              newest = await launch()
              if (newest !== undefined) pool!.hedged(poolIndex(slowOne))
              continue
            }
            inflight.delete(first.i)
            const { outcome } = first
            if (outcome.kind === 'result') return outcome.result
            if (outcome.kind === 'answer') throw outcome.error
            // One node's null is not absence while another may have it.
            if (outcome.kind === 'null') sawNull = true
            else {
              lastError = outcome.error
              if (outcome.kind === 'endpoint') onlyRefused = false
            }
            if (inflight.size === 0) newest = await launch()
          }
          // A node answered null and the others failed or refused: that null is the answer for now.
          if (sawNull) return null
          // Every endpoint answered with a refusal: asking again at once will not change it.
          if (onlyRefused) break
        }
        // Typed once, here: an endpoint failure (network, timeout, 5xx, rate limit) is worth retrying later,
        // whatever wraps it above (viem's request errors keep it as their cause). A node's own answer (a
        // revert, a refusal) stays viem's error, which viem decodes into contract errors.
        throw classifyRpcFailure(lastError) === 'endpoint'
          ? new RetryableChainError('no RPC provider answered', { cause: lastError })
          : lastError
      }) as EIP1193RequestFn,
    })
  }
}
