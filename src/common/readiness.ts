/** One RPC provider of a chain as /readyz reports it (the URL without path or query). */
export interface ProviderReadiness {
  url: string
  /** Its latest block number as last seen, null before it answered. */
  head: string | null
  /** Blocks behind the highest head seen among the chain's providers, null before it answered. */
  lag: number | null
  /** Methods it was found to offer: `eth_getBlockReceipts`, `debug_traceTransaction`, `trace_transaction`. */
  capabilities: string[]
  /** `unknown`, `ok`, `lagging`, `failing`, `rate-limited`, `sitting-out` or `refused`. */
  state: string
}

/** One tracked chain's state as /readyz reports it. */
export interface ChainReadiness {
  name: string
  ok: boolean
  head?: string
  headAgeSeconds?: number
  error?: string
  /** The head is stale past this age (null: never stale). */
  maxHeadAgeSeconds?: number | null
  providers?: ProviderReadiness[]
}
