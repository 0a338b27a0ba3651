import { BaseError, createTransport, ExecutionRevertedError, RpcRequestError, type EIP1193RequestFn, type Transport } from 'viem'
import { isMethodUnavailable, isTransient } from './errors.ts'

/** One request sent to one RPC endpoint, reported for metrics and logs. */
export interface RpcAttempt {
  method: string
  /** Index of the endpoint in the chain's `rpc` list. */
  endpoint: number
  ok: boolean
  error?: unknown
  durationMs: number
}

export interface FailoverOptions {
  onAttempt?: (attempt: RpcAttempt) => void
  /** Extra passes over every endpoint once all of them failed, each after a growing pause. */
  retryRounds?: number
  /** First pause between passes, and first cool-down of a failing endpoint. */
  baseDelayMs?: number
  /** Longest cool-down of an endpoint that keeps failing. */
  maxCooldownMs?: number
}

/**
 * What a failed request says about the endpoint that answered it:
 * - `answer`: the node answered and another node would answer the same (a revert, bad params):
 *   no use asking elsewhere;
 * - `refused`: the node answered with an error of its own (method not offered, state pruned, block
 *   unknown yet): another URL may answer, and this one is not unhealthy;
 * - `endpoint`: the node failed (network, timeout, HTTP error, rate limit, internal error): cool it down.
 */
export type FailureKind = 'answer' | 'refused' | 'endpoint'

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
  for (let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'number') return e.code
  }
  return undefined
}

/**
 * A viem transport over several RPC endpoints of one chain. Unlike viem's `fallback`, it remembers
 * which endpoints fail: a failing endpoint is cooled down (exponentially longer while it keeps
 * failing) and asked last, so a dead first URL costs one timeout, not one per request. When every
 * endpoint failed, it makes `retryRounds` more passes with backoff before giving up; callers that
 * must not lose work (the chain engine) retry later on their own.
 */
export function failover(endpoints: Transport[], options: FailoverOptions = {}): Transport {
  const retryRounds = options.retryRounds ?? 1
  const baseDelayMs = options.baseDelayMs ?? 250
  const maxCooldownMs = options.maxCooldownMs ?? 60_000
  const health = endpoints.map(() => ({ failures: 0, coolUntil: 0 }))

  const order = (): number[] => {
    const now = Date.now()
    const indexes = endpoints.map((_, i) => i)
    const ready = indexes.filter((i) => health[i]!.coolUntil <= now)
    const cooling = indexes.filter((i) => health[i]!.coolUntil > now).sort((a, b) => health[a]!.coolUntil - health[b]!.coolUntil)
    return [...ready, ...cooling]
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
        for (let round = 0; round <= retryRounds; round++) {
          if (round > 0) await new Promise((resolve) => setTimeout(resolve, baseDelayMs * 2 ** (round - 1)))
          let onlyRefused = true
          for (const i of order()) {
            const started = performance.now()
            try {
              const result: unknown = await instances[i]!.request(args as never)
              health[i] = { failures: 0, coolUntil: 0 }
              options.onAttempt?.({ method: args.method, endpoint: i, ok: true, durationMs: performance.now() - started })
              return result
            } catch (error) {
              options.onAttempt?.({ method: args.method, endpoint: i, ok: false, error, durationMs: performance.now() - started })
              lastError = error
              const kind = classifyRpcFailure(error)
              if (kind === 'answer') throw error
              if (kind === 'endpoint') {
                onlyRefused = false
                const failures = health[i]!.failures + 1
                health[i] = { failures, coolUntil: Date.now() + Math.min(maxCooldownMs, baseDelayMs * 2 ** (failures - 1)) }
              }
            }
          }
          // Every endpoint answered with a refusal: asking again at once will not change it.
          if (onlyRefused) break
        }
        throw lastError
      }) as EIP1193RequestFn,
    })
  }
}
