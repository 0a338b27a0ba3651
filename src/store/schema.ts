import type { ColumnType, Generated } from 'kysely'

/** Timestamps are written as Date and read as Date on both stores. */
type Timestamp = ColumnType<Date, Date | string, Date | string>
type TimestampDefault = ColumnType<Date, Date | string | undefined, Date | string>
/** numeric columns come back as strings from both stores (exact, never floats). */
type Numeric = ColumnType<string, string | bigint | number, string | bigint | number>
type Json = ColumnType<unknown, string | null, string | null>

export interface AccountsTable {
  id: string
  name: string
  created_at: TimestampDefault
}

export interface ApiKeysTable {
  id: string
  account_id: string
  key_hash: Uint8Array
  prefix: string
  created_at: TimestampDefault
  revoked_at: Timestamp | null
}

export interface IntegrationsTable {
  id: string
  account_id: string
  name: string | null
  private_key_pem: string
  public_key_pem: string
  created_at: TimestampDefault
  /** Migration 0015: payment.reverted / payment.reconfirmed callbacks are sent. */
  reversal_events: Generated<boolean>
}

export interface LinksTable {
  id: string
  account_id: string
  name: string | null
  created_at: TimestampDefault
  /** Set when the link is removed (migration 0005): it keeps its trackings but takes no new ones. */
  removed_at: Timestamp | null
}

export interface ShopsTable {
  account_id: string
  shop: string
  created_at: TimestampDefault
}

export interface AppsTable {
  id: string
  account_id: string
  name: string
  created_at: TimestampDefault
}

export interface AppGrantsTable {
  id: string
  app_id: string
  account_id: string
  scopes: string[]
  token_hash: Uint8Array
  created_at: TimestampDefault
  expires_at: Timestamp | null
  revoked_at: Timestamp | null
}

export interface TrackingsTable {
  id: string
  account_id: string
  secret_id: string
  shape: 'current' | 'earlier'
  blockchain: string
  /** Migration 0026: null until a nonce-less tracking's transaction is known. */
  sender: string | null
  nonce: Numeric | null
  receiver: string
  token: string
  decimals: number
  commitment: 'confirmed' | 'finalized'
  confirmations: number
  after_block: Numeric
  amount: string
  fee_amount: string | null
  fee_receiver: string | null
  transaction: string | null
  payload: Json
  callback: string | null
  /** Migration 0038: the callback's origin (`src/domain/endpoint-url.ts`), written with the tracking. */
  callback_origin: string | null
  forward_to: string | null
  forward_on_failure: boolean
  integration_id: string | null
  link_id: string | null
  shop: string | null
  shopify_payment_id: string | null
  status: 'pending' | 'success' | 'failed'
  failed_reason: string | null
  release: Generated<boolean>
  /** The hash the record carried before the engine judged a replacing transaction (migration 0004, kept by a trigger). */
  replaced_transaction: string | null
  confirmed_at: Timestamp | null
  /** When the waiting user was released (migration 0025). */
  released_at: Timestamp | null
  /** Migration 0015: the paying transaction left the chain after success (null again once reconfirmed). */
  reverted_at: Timestamp | null
  /** Migration 0015: the record shows `reverted_at` only when this is true. */
  reverted_ever: Generated<boolean>
  /** Migration 0026: Unix seconds after which a payment not found yet fails (null: none). */
  deadline: Numeric | null
  /** Migration 0031: created without a nonce (matched by receiver, identified by secret_id). */
  nonceless: Generated<boolean>
  /** Migration 0028: when the database stored the tracking, on its own clock (time-outs count from it). */
  registered_at: Generated<Timestamp>
  created_at: Timestamp
  updated_at: Timestamp
}

export interface ServiceKeysTable {
  name: string
  private_key_pem: string
  public_key_pem: string
  created_at: TimestampDefault
}

export interface DeliveriesTable {
  id: string
  tracking_id: string
  reason: 'completed' | 'redeliver' | 'event'
  state: Generated<'due' | 'delivered' | 'accepted' | 'dead' | 'skipped'>
  attempts: Generated<number>
  next_attempt_at: Timestamp
  locked_until: Timestamp | null
  created_at: Timestamp
  updated_at: Timestamp
  /** Migration 0003: the lease holder's claim and the last attempt's result. */
  claimed_by: string | null
  last_attempt_at: Timestamp | null
  last_status_code: number | null
  last_error: string | null
  finished_at: Timestamp | null
  /** Migration 0009: when the next attempt fell due (claims leave it alone); null in rows written before. */
  due_at: ColumnType<Date | null, Date | string, Date | string>
  /** Migration 0009: when the lease holder claimed it (the start of an attempt its crash cut off). */
  claimed_at: Timestamp | null
  /** Migration 0028: when the claimed attempt's request started to go out (null: not sent since the claim). */
  sending_at: Timestamp | null
  /** Migration 0015: set while the delivery's endpoint is disabled (not claimed, no retry spent). */
  paused_at: Timestamp | null
  /** Migration 0015: null for the payment callback, else the event sent ('payment.reverted', 'payment.reconfirmed'). */
  event: string | null
  /** Migration 0033: who asked for this delivery again (a redelivery, or a due one brought forward); null otherwise. */
  requested_by: RedeliveryRequester | null
}

/** Who asked for a callback to be sent again. */
export type RedeliveryRequester = 'api' | 'dashboard' | 'cli' | 'recovery'

/** Migration 0003: one row per callback attempt (the operator's attempt log). */
export interface DeliveryAttemptsTable {
  id: string
  delivery_id: string
  attempt: number
  started_at: Timestamp
  duration_ms: number
  outcome: 'delivered' | 'accepted' | 'failed' | 'refused'
  status_code: number | null
  error: string | null
  response_excerpt: string | null
  worker: string
}

/** Migration 0002: the chain engine's window of unfinalized blocks per chain. */
export interface ChainBlocksTable {
  chain: string
  number: ColumnType<string, string | bigint, string | bigint>
  hash: string
  parent_hash: string
  timestamp: ColumnType<string, string | bigint, string | bigint>
}

/** Migration 0012: the chain the stored progress of `chain` belongs to (chain id, hash of an early block). */
export interface ChainIdentitiesTable {
  chain: string
  chain_id: ColumnType<string, string | bigint | number, string | bigint | number>
  block_number: ColumnType<string, string | bigint, string | bigint>
  block_hash: string
  recorded_at: Timestamp
}

/** Migration 0010: who follows a chain, until when, and the fencing token of that lead. */
export interface ChainLeasesTable {
  chain: string
  holder: string
  holder_pid: number | null
  token: ColumnType<string, string | bigint, string | bigint>
  acquired_at: Timestamp
  expires_at: Timestamp
}

/** Migration 0002: a pending tracking whose transaction is mined, waiting for confirmations. */
export interface TrackingMatchesTable {
  tracking_id: string
  chain: string
  block_number: ColumnType<string, string | bigint, string | bigint>
  block_hash: string
  transaction: string
  evidence: Json
  created_at: Timestamp
  /** Migration 0028: when the transaction was found, on the database's clock. */
  matched_at: Generated<Timestamp>
}

/** Migration 0039: a new tracking's check against the chain, still owed (a trace's: a search from `from_block`). */
export interface OwedChecksTable {
  tracking_id: string
  blockchain: string
  from_block: ColumnType<string, string | bigint, string | bigint>
  /** A trace's search: only the chain's follower can run it. */
  trace: boolean
  created_at: Generated<Timestamp>
}

/** Migration 0011: a success whose inclusion block is not final yet (watched for reorgs). */
export interface SuccessWatchesTable {
  tracking_id: string
  chain: string
  block_number: ColumnType<string, string | bigint, string | bigint>
  block_hash: string
  transaction: string
  created_at: Timestamp
  /** Migration 0015: the transaction left the chain then; watched until it is mined again. */
  reverted_at: Timestamp | null
}

/** Migration 0015: the Standard Webhooks secret of an integration or account (sealed when a key is set). */
export interface WebhookSecretsTable {
  owner: string
  account_id: string
  secret: string
  previous_secret: string | null
  previous_until: Timestamp | null
  created_at: Timestamp
}

/** Migration 0015: the health of one (account, callback origin). */
export interface WebhookEndpointsTable {
  account_id: string
  url: string
  state: Generated<'active' | 'disabled'>
  disabled_reason: string | null
  disabled_at: Timestamp | null
  failing_since: Timestamp | null
  last_success_at: Timestamp | null
  updated_at: Timestamp
}

/** Migration 0022: a signed-in dashboard browser (only the SHA-256 of its cookie is stored). */
export interface DashboardSessionsTable {
  id_hash: Uint8Array
  csrf_token: string
  created_at: Timestamp
  expires_at: Timestamp
  /** HMAC-SHA256 of the admin token that opened the session, keyed with the cookie value (migration 0027). */
  token_binding: Uint8Array
}

/**
 * The database as Kysely sees it. Later subsystems add their tables here next to their migration.
 */
export interface Database {
  accounts: AccountsTable
  api_keys: ApiKeysTable
  integrations: IntegrationsTable
  links: LinksTable
  shops: ShopsTable
  apps: AppsTable
  app_grants: AppGrantsTable
  trackings: TrackingsTable
  service_keys: ServiceKeysTable
  deliveries: DeliveriesTable
  webhook_secrets: WebhookSecretsTable
  webhook_endpoints: WebhookEndpointsTable
  chain_blocks: ChainBlocksTable
  chain_leases: ChainLeasesTable
  chain_identities: ChainIdentitiesTable
  tracking_matches: TrackingMatchesTable
  owed_checks: OwedChecksTable
  success_watches: SuccessWatchesTable
  delivery_attempts: DeliveryAttemptsTable
  dashboard_sessions: DashboardSessionsTable
}
