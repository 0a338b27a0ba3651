/** One request sent to one RPC endpoint, reported for metrics and logs. */
export interface RpcAttempt {
  method: string
  /** Index of the endpoint in the chain's `rpc` list. */
  endpoint: number
  ok: boolean
  error?: unknown
  durationMs: number
}
