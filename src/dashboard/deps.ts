import type { SendTestEvent } from '../admin/endpoints.ts'
import type { Clock } from '../common/clock.ts'
import type { ChainReadiness } from '../common/readiness.ts'
import type { TrackingEvents } from '../common/tracking-events.ts'
import type { AuthThrottle } from '../http/auth-throttle.ts'
import type { KeyPairPem } from '../store/service-keys.ts'
import type { Db } from '../store/infrastructure/database.ts'

/** What the dashboard is given by the service (src/service.ts composes it). */
export interface DashboardDeps {
  db: Db
  clock: Clock
  /** Without it there is no dashboard, as there is no admin API. */
  adminToken: string | null
  events: TrackingEvents
  /** The configured chains' names (the payment list's filter). */
  chainNames: readonly string[]
  /** The tracked chains as /readyz reports them (with their providers when the engine lists them). */
  chainReadiness: () => Promise<ChainReadiness[]>
  /** Failed sign-ins count with the API's failed authentications, per address. */
  authThrottle: Pick<AuthThrottle, 'checkAddress' | 'failedAddress'>
  /** Integrations get their callback-signing key from the callbacks subsystem. */
  generateKeyPair: () => Promise<KeyPairPem>
  secretsKey: Buffer | null
  /** One signed test event to an endpoint (the callbacks subsystem's sender); absent: no Test button. */
  sendTestEvent?: SendTestEvent
  /** A redelivery became due: wake this node's delivery workers. */
  onDeliveryScheduled: () => void
  /** API key caches of the HTTP authentication (a revoked key stops at once, a new one works at once). */
  onKeyRevoked: (keyId: string) => void
  onKeyCreated: (key: string) => void
  /** A token's symbol for amounts ("2.5 USDC"); null when unknown. */
  tokenSymbol?: (blockchain: string, token: string) => Promise<string | null>
}

/** One RPC provider of a chain, as the chain data subsystem adds them to the readiness report. */
export interface ProviderState {
  url: string
  head: string | null
  /** Blocks behind the highest head among the chain's providers. */
  lag: number | null
  capabilities: string[]
  state: string
}

/** A chain as the readiness check reports it, with its providers when the service lists them. */
export interface ChainState extends ChainReadiness {
  providers?: ProviderState[]
}
