import { isMethodUnavailable, isTransient, RetryableChainError } from './errors.ts'
import type { CallFrame } from './transfers.ts'

/** The one RPC capability a trace needs; a viem PublicClient fits. */
export interface RequestClient {
  request(args: { method: string; params?: unknown }): Promise<unknown>
}

export type TraceSupport = 'unknown' | 'supported' | 'unsupported'

export interface TraceReader {
  /** The call tree of a mined transaction, or null when the chain's RPC does not offer traces. */
  callTrace(hash: string): Promise<CallFrame | null>
  /** What was learned so far about `debug_traceTransaction` on this chain. */
  support(): TraceSupport
}

/**
 * Reads `debug_traceTransaction` call trees for one chain and learns once whether the RPC offers
 * them: a "method not found / not supported" answer is remembered and later calls skip the RPC. A
 * timeout, a dropped connection or a rate limit says nothing about support: it throws a
 * RetryableChainError so the caller judges the payment later rather than without its internal calls.
 */
export function createTraceReader(client: RequestClient): TraceReader {
  let support: TraceSupport = 'unknown'
  return {
    support: () => support,
    async callTrace(hash) {
      if (support === 'unsupported') return null
      let result: unknown
      try {
        result = await client.request({ method: 'debug_traceTransaction', params: [hash, { tracer: 'callTracer' }] })
      } catch (error) {
        // Once traces worked, a refusal comes from one of several RPC URLs: try again later.
        if (isMethodUnavailable(error) && support === 'unknown') {
          support = 'unsupported'
          return null
        }
        // A timeout or network failure, but also e.g. "transaction not found" from a lagging node:
        // both may clear up, and judging without the internal calls could fail a real payment.
        const what = isTransient(error) ? 'did not answer' : `failed for ${hash}`
        throw new RetryableChainError(`debug_traceTransaction ${what}`, { cause: error })
      }
      if (result === null || result === undefined) {
        throw new RetryableChainError(`debug_traceTransaction found no trace for ${hash} yet`)
      }
      if (!isCallFrame(result)) {
        // The node ignored the callTracer (e.g. answered with opcode logs): as good as unsupported.
        support = 'unsupported'
        return null
      }
      support = 'supported'
      return result
    },
  }
}

function isCallFrame(value: unknown): value is CallFrame {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string'
}
