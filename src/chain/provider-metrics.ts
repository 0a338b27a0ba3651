import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import { once } from './rpc-metrics.ts'

/** Per-provider figures (labels `chain`, `provider` = the redacted URL). */
export interface ProviderMetrics {
  request(chain: string, provider: string, ok: boolean, rateLimited: boolean, seconds: number): void
  headLag(chain: string, provider: string, blocks: number): void
  disagreement(chain: string, provider: string): void
  /** A read to this provider was slow and also sent to the next provider. */
  hedge(chain: string, provider: string): void
}

export function createProviderMetrics(registry: Registry): ProviderMetrics {
  const labelNames = ['chain', 'provider']
  const counter = (name: string, help: string) => once(registry, name, () => new Counter({ name, help, labelNames, registers: [registry] }))
  const requests = counter('paywatch_rpc_provider_requests_total', 'JSON-RPC requests sent to one provider')
  const errors = counter('paywatch_rpc_provider_errors_total', 'JSON-RPC requests to one provider that failed (429s included)')
  const limited = counter('paywatch_rpc_provider_rate_limited_total', 'HTTP 429 / rate-limit answers of one provider')
  const disagreements = counter(
    'paywatch_rpc_disagreements_total',
    "Evidence answers of one provider that contradicted the providers agreeing on a verdict's evidence",
  )
  const hedges = counter('paywatch_rpc_hedged_requests_total', 'Reads to one provider that were slow and also sent to the next provider')
  const latency = once(
    registry,
    'paywatch_rpc_provider_latency_seconds',
    () =>
      new Histogram({
        name: 'paywatch_rpc_provider_latency_seconds',
        help: 'JSON-RPC request duration per provider',
        labelNames,
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
        registers: [registry],
      }),
  )
  const lag = once(
    registry,
    'paywatch_rpc_provider_head_lag_blocks',
    () =>
      new Gauge({
        name: 'paywatch_rpc_provider_head_lag_blocks',
        help: "Blocks a provider's head is behind the highest head seen on its chain",
        labelNames,
        registers: [registry],
      }),
  )
  return {
    request(chain, provider, ok, rateLimited, seconds) {
      requests.inc({ chain, provider })
      if (!ok) errors.inc({ chain, provider })
      if (rateLimited) limited.inc({ chain, provider })
      latency.observe({ chain, provider }, seconds)
    },
    headLag: (chain, provider, blocks) => lag.set({ chain, provider }, blocks),
    disagreement: (chain, provider) => disagreements.inc({ chain, provider }),
    hedge: (chain, provider) => hedges.inc({ chain, provider }),
  }
}
