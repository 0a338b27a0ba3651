/** One tracked chain's state as /readyz reports it. */
export interface ChainReadiness {
  name: string
  ok: boolean
  head?: string
  headAgeSeconds?: number
  error?: string
}
