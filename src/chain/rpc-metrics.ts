import { Counter, Histogram, type Registry } from 'prom-client'
import type { RpcAttempt } from './rpc-attempt.ts'

/** A metric registered once per registry, found again when a second component shares it. */
export function once<T>(registry: Registry, name: string, create: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? create()
}

export interface RpcMetrics {
  observe(chain: string, attempt: RpcAttempt): void
}

/** RPC requests and errors per chain and method, counted per URL attempt. */
export function createRpcMetrics(registry: Registry): RpcMetrics {
  const requests = once(
    registry,
    'paywatch_rpc_requests_total',
    () =>
      new Counter({
        name: 'paywatch_rpc_requests_total',
        help: 'JSON-RPC requests sent, per chain and method (each URL attempt counts)',
        labelNames: ['chain', 'method'],
        registers: [registry],
      }),
  )
  const errors = once(
    registry,
    'paywatch_rpc_errors_total',
    () =>
      new Counter({
        name: 'paywatch_rpc_errors_total',
        help: 'JSON-RPC requests that failed, per chain and method',
        labelNames: ['chain', 'method'],
        registers: [registry],
      }),
  )
  const duration = once(
    registry,
    'paywatch_rpc_request_duration_seconds',
    () =>
      new Histogram({
        name: 'paywatch_rpc_request_duration_seconds',
        help: 'JSON-RPC request duration per chain',
        labelNames: ['chain'],
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
        registers: [registry],
      }),
  )
  return {
    observe(chain, attempt) {
      requests.inc({ chain, method: attempt.method })
      if (!attempt.ok) errors.inc({ chain, method: attempt.method })
      duration.observe({ chain }, attempt.durationMs / 1000)
    },
  }
}
