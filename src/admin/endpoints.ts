import type { Clock } from '../common/clock.ts'
import { endpointUrlOf } from '../domain/endpoint-url.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { recoverEndpointDeliveries } from '../store/endpoint-recovery.ts'
import * as endpoints from '../store/webhook-endpoints.ts'
import type { EndpointRow } from '../store/webhook-endpoints.ts'
import { missingAccount, notFound, type NotFound } from './admin-deps.ts'

/**
 * Callback endpoints (docs/api.md §8): one per (account, scheme://host[:port] of a callback URL), with
 * its health, for the account that owns it. Another account's endpoint is a not-found like an unknown
 * one. The url given may be any URL of the endpoint (its path is ignored).
 */

export interface EndpointDeps {
  db: Db
  clock: Clock
  /** Deliveries became due now: wakes this process's workers (a CLI leaves it to the service's poll). */
  onScheduled?: () => void
  /**
   * Sends one signed test event to a callback url (the callbacks subsystem's sender, injected: admin may
   * not import it), or refuses a url callbacks may not reach (SSRF rules). Resolves once the POST is
   * queued for its endpoint; its answer is only logged.
   */
  sendTestEvent?: SendTestEvent
}

export type SendTestEvent = (accountId: string, url: string) => Promise<{ kind: 'sent'; id: string } | { kind: 'refused'; message: string }>

/** The url may not be called back (a private, loopback, link-local… address; docs/api.md §4). */
export interface RefusedUrl {
  kind: 'refused'
  message: string
}

export type { EndpointRow }

/** The url was not an absolute http(s) URL. */
export interface InvalidUrl {
  kind: 'invalid-url'
}

export async function listEndpoints(
  deps: { db: Db },
  accountId: string,
): Promise<{ kind: 'listed'; endpoints: EndpointRow[] } | NotFound<'account'>> {
  const missing = await missingAccount(deps.db, accountId)
  if (missing) return missing
  return { kind: 'listed', endpoints: await endpoints.listEndpoints(deps.db, accountId) }
}

/** Every account's endpoints, for the operator (each carries its `accountId`). */
export async function listAllEndpoints(deps: { db: Db }): Promise<{ kind: 'listed'; endpoints: EndpointRow[] }> {
  return { kind: 'listed', endpoints: await endpoints.listEndpoints(deps.db, null) }
}

async function accountEndpoint(db: Db, accountId: string, url: string): Promise<string | InvalidUrl | NotFound<'endpoint'>> {
  const endpoint = endpointUrlOf(url)
  if (endpoint === null) return { kind: 'invalid-url' }
  return (await endpoints.isAccountEndpoint(db, accountId, endpoint)) ? endpoint : notFound('endpoint')
}

/** Enables the endpoint; its waiting deliveries go out now. */
export async function enableEndpoint(
  deps: EndpointDeps,
  accountId: string,
  url: string,
): Promise<{ kind: 'enabled'; endpoint: EndpointRow; resumed: number } | InvalidUrl | NotFound<'endpoint'>> {
  const endpoint = await accountEndpoint(deps.db, accountId, url)
  if (typeof endpoint !== 'string') return endpoint
  const resumed = await endpoints.enableEndpoint(deps.db, accountId, endpoint, deps.clock())
  // Also with nothing resumed: the worker's view of disabled endpoints is read again (cache-freshness.ts).
  deps.onScheduled?.()
  const row = (await endpoints.listEndpoints(deps.db, accountId)).find((e) => e.url === endpoint)!
  return { kind: 'enabled', endpoint: row, resumed }
}

/** Sends again every delivery to the endpoint whose last attempt failed, or that died, since `since`. */
export async function recoverEndpoint(
  deps: EndpointDeps,
  accountId: string,
  url: string,
  since: Date,
): Promise<{ kind: 'recovered'; redelivered: number } | InvalidUrl | NotFound<'endpoint'>> {
  const endpoint = await accountEndpoint(deps.db, accountId, url)
  if (typeof endpoint !== 'string') return endpoint
  const redelivered = await recoverEndpointDeliveries(deps.db, accountId, endpoint, since, deps.clock())
  if (redelivered > 0) deps.onScheduled?.()
  return { kind: 'recovered', redelivered }
}

/**
 * One signed test event (`{"event":"test","sent_at":…}`) to a callback url of the account: any url its
 * callbacks may use, also before anything was delivered there (the endpoint need not exist yet).
 */
export async function testEndpoint(
  deps: EndpointDeps,
  accountId: string,
  url: string,
): Promise<{ kind: 'sent'; id: string } | { kind: 'unavailable' } | InvalidUrl | RefusedUrl | NotFound<'account'>> {
  if (endpointUrlOf(url) === null) return { kind: 'invalid-url' }
  const missing = await missingAccount(deps.db, accountId)
  if (missing) return missing
  if (!deps.sendTestEvent) return { kind: 'unavailable' }
  // Sent to the url as given (the receiver's own path).
  return deps.sendTestEvent(accountId, url)
}
