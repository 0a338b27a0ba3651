import type { ChainHandle } from '../chain/registry.ts'
import type { ChainReadiness } from '../common/readiness.ts'

/**
 * What makes a chain not ready, beyond a failing sync: no provider serves it (all refused), its
 * head is older than the chain's `maxHeadAgeSeconds`, or the block already processed is ahead of
 * every provider's head (they serve another or an older chain, or all fell behind). Undefined: ready.
 */
export function chainProblem(handle: ChainHandle, head: { number: bigint; ageSeconds: number } | undefined): string | undefined {
  const { pool, config } = handle
  if (pool.serving().length === 0) return 'no RPC provider serves this chain (every one was refused)'
  if (head && config.maxHeadAgeSeconds !== null && head.ageSeconds > config.maxHeadAgeSeconds) {
    return `the head is ${head.ageSeconds} s old (more than ${config.maxHeadAgeSeconds} s)`
  }
  const best = pool.bestHead()
  if (head && best !== undefined && head.number > best) {
    return `the processed block ${head.number} is ahead of every provider's head (${best})`
  }
  return undefined
}

/** The readiness entry of a chain with its providers and the problem found, if any. */
export function withProviders(handle: ChainHandle, entry: ChainReadiness): ChainReadiness {
  const head =
    entry.head !== undefined && entry.headAgeSeconds !== undefined
      ? { number: BigInt(entry.head), ageSeconds: entry.headAgeSeconds }
      : undefined
  const problem = chainProblem(handle, head)
  return {
    ...entry,
    ok: entry.ok && problem === undefined,
    ...(problem && entry.ok ? { error: problem } : {}),
    maxHeadAgeSeconds: handle.config.maxHeadAgeSeconds,
    providers: handle.pool.view(),
  }
}
