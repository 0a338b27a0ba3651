import { isMethodUnavailable, isTransient, RetryableChainError } from './errors.ts'
import { isParityTraceList, parityToCallFrame } from './parity-trace.ts'
import type { CallFrame } from './transfers.ts'

/** The one RPC capability a trace needs; a viem PublicClient fits. */
export interface RequestClient {
  request(args: { method: string; params?: unknown }): Promise<unknown>
}

export type TraceSupport = 'unknown' | 'supported' | 'unsupported'

export interface TraceReader {
  /** The call tree of a mined transaction, or null when the chain's RPC does not offer traces. */
  callTrace(hash: string): Promise<CallFrame | null>
  /** What was learned so far about traces on this chain (either method). */
  support(): TraceSupport
}

/**
 * Reads call trees for one chain: `debug_traceTransaction` (callTracer) where the RPC offers it,
 * else `trace_transaction` (the parity format, turned into the same tree). Whether each is offered
 * is learned once: a "method not found / not supported" answer is remembered and later calls skip
 * that method. A timeout, a dropped connection or a rate limit says nothing about support: it throws
 * a RetryableChainError so the caller judges the payment later rather than without its internal calls.
 */
export function createTraceReader(client: RequestClient): TraceReader {
  const debug = { method: 'debug_traceTransaction', support: 'unknown' as TraceSupport }
  const parity = { method: 'trace_transaction', support: 'unknown' as TraceSupport }

  /** The answer of one method, or null once the method is known not to be offered. */
  async function ask(kind: typeof debug, params: unknown[]): Promise<unknown> {
    if (kind.support === 'unsupported') return null
    try {
      const result = await client.request({ method: kind.method, params })
      if (result === null || result === undefined || (Array.isArray(result) && result.length === 0)) {
        throw new RetryableChainError(`${kind.method} found no trace for ${String(params[0])} yet`)
      }
      return result
    } catch (error) {
      if (error instanceof RetryableChainError) throw error
      // Once traces worked, a refusal comes from one of several RPC URLs: try again later.
      if (isMethodUnavailable(error) && kind.support === 'unknown') {
        kind.support = 'unsupported'
        return null
      }
      // A timeout or network failure, but also e.g. "transaction not found" from a lagging node:
      // both may clear up, and judging without the internal calls could fail a real payment.
      const what = isTransient(error) ? 'did not answer' : `failed for ${String(params[0])}`
      throw new RetryableChainError(`${kind.method} ${what}`, { cause: error })
    }
  }

  return {
    support: () =>
      debug.support === 'supported' || parity.support === 'supported'
        ? 'supported'
        : debug.support === 'unsupported' && parity.support === 'unsupported'
          ? 'unsupported'
          : 'unknown',
    async callTrace(hash) {
      const tree = await ask(debug, [hash, { tracer: 'callTracer' }])
      if (tree !== null) {
        if (isCallFrame(tree)) {
          debug.support = 'supported'
          return tree
        }
        // The node ignored the callTracer (e.g. answered with opcode logs): as good as unsupported.
        debug.support = 'unsupported'
      }
      const list = await ask(parity, [hash])
      if (list === null) return null
      const root = isParityTraceList(list) ? parityToCallFrame(list) : null
      if (!root) {
        parity.support = 'unsupported'
        return null
      }
      parity.support = 'supported'
      return root
    },
  }
}

function isCallFrame(value: unknown): value is CallFrame {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string'
}
