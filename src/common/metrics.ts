import { Registry, collectDefaultMetrics } from 'prom-client'

export interface Metrics {
  registry: Registry
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry()
  if (options.defaultMetrics) collectDefaultMetrics({ register: registry })
  return { registry }
}
