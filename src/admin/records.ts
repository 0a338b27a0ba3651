import type { Account } from '../store/accounts.ts'
import type { ApiKeyInfo } from '../store/api-keys.ts'
import type { AppGrant } from '../store/app-grants.ts'
import type { App } from '../store/apps.ts'
import type { AttemptRow, DeliveryRow } from '../store/deliveries.ts'
import type { Integration } from '../store/integrations.ts'
import type { Link } from '../store/links.ts'
import type { Shop } from '../store/shops.ts'
import type { EndpointRow } from '../store/webhook-endpoints.ts'

/**
 * The JSON shapes of admin records, shared by the admin API and the CLI (docs/api.md §6: the CLI
 * prints what the admin API answers). Snake case, ISO 8601 times.
 */

export const accountJson = (a: Account) => ({ id: a.id, name: a.name, created_at: a.createdAt.toISOString() })

export const apiKeyJson = (k: ApiKeyInfo) => ({
  id: k.id,
  prefix: k.prefix,
  created_at: k.createdAt.toISOString(),
  revoked_at: k.revokedAt?.toISOString() ?? null,
})

export const appJson = (app: App) => ({ id: app.id, account_id: app.accountId, name: app.name, created_at: app.createdAt.toISOString() })

export const grantJson = (g: AppGrant) => ({
  id: g.id,
  app_id: g.appId,
  account_id: g.accountId,
  scopes: g.scopes,
  created_at: g.createdAt.toISOString(),
  expires_at: g.expiresAt?.toISOString() ?? null,
  revoked_at: g.revokedAt?.toISOString() ?? null,
})

export const linkJson = (link: Link) => ({
  id: link.id,
  account_id: link.accountId,
  name: link.name,
  created_at: link.createdAt.toISOString(),
})

export const shopJson = (s: Shop) => ({ shop: s.shop, created_at: s.createdAt.toISOString() })

export const integrationJson = (i: Integration) => ({
  id: i.id,
  account_id: i.accountId,
  name: i.name,
  public_key: i.publicKeyPem,
  reversal_events: i.reversalEvents,
  created_at: i.createdAt.toISOString(),
})

const iso = (value: Date | string | null): string | null => (value === null ? null : new Date(value).toISOString())

export const attemptJson = (a: AttemptRow) => ({
  attempt: a.attempt,
  started_at: iso(a.started_at),
  duration_ms: a.duration_ms,
  outcome: a.outcome,
  status_code: a.status_code,
  error: a.error,
  response: a.response_excerpt,
})

export const deliveryJson = (d: DeliveryRow) => ({
  id: d.id,
  reason: d.reason,
  state: d.state,
  attempt_count: d.attempts,
  next_attempt_at: d.state === 'due' ? iso(d.next_attempt_at) : null,
  last_attempt_at: iso(d.last_attempt_at),
  last_status_code: d.last_status_code,
  last_error: d.last_error,
  finished_at: iso(d.finished_at),
  created_at: iso(d.created_at),
  // Only on event deliveries (docs/api.md §8): a payment callback's shape stays as it was.
  ...(d.event ? { event: d.event } : {}),
})

/** A delivery with its attempt log, as the operator tools list them. */
export const deliveryWithAttemptsJson = (d: DeliveryRow & { attemptLog: AttemptRow[] }) => ({
  ...deliveryJson(d),
  attempts: d.attemptLog.map(attemptJson),
})

/** An endpoint (docs/api.md §8); the operator's listing of every account adds `account_id`. */
export const endpointJson = (e: EndpointRow) => ({
  url: e.url,
  state: e.state,
  disabled_reason: e.disabledReason,
  failing_since: e.failingSince?.toISOString() ?? null,
  last_success_at: e.lastSuccessAt?.toISOString() ?? null,
  pending_deliveries: e.pendingDeliveries,
})

export const accountEndpointJson = (e: EndpointRow) => ({ account_id: e.accountId, ...endpointJson(e) })
