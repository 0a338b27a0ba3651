import type { FastifyInstance } from 'fastify'
import { listAccounts } from '../admin/accounts.ts'
import { enableEndpoint, listAllEndpoints, recoverEndpoint, testEndpoint } from '../admin/endpoints.ts'
import { parseIsoTimestamp } from '../domain/iso-timestamp.ts'
import type { DashboardDeps } from './deps.ts'
import { time } from './format.ts'
import { html, queryString } from './html.ts'
import { actionButton, csrfField, notice, page, sendPage } from './layout.ts'

type Form = Record<string, string | undefined>

/**
 * The result of the last action, carried by the redirect as a code and a count (never as text: a link
 * anyone can send would put its words into a success notice).
 */
interface Outcome {
  done?: string
  count?: string
}

function outcomeText(outcome: Outcome): { text: string; kind: 'ok' | 'error' } | undefined {
  const count = Number.parseInt(outcome.count ?? '0', 10) || 0
  switch (outcome.done) {
    case 'enabled':
      return { text: `The endpoint is enabled; ${count} waiting deliveries go out now.`, kind: 'ok' }
    case 'recovered':
      return { text: `${count} ${count === 1 ? 'delivery' : 'deliveries'} to the endpoint sent again.`, kind: 'ok' }
    case 'tested':
      return { text: 'A signed test event is on its way to the endpoint.', kind: 'ok' }
    case 'unavailable':
      return { text: 'This node cannot send test events.', kind: 'error' }
    case 'invalid-url':
      return { text: 'That is not an endpoint URL.', kind: 'error' }
    case 'not-found':
      return { text: 'No such endpoint.', kind: 'error' }
    case 'refused':
      return { text: 'Callbacks may not reach that address (a private, loopback or otherwise special network).', kind: 'error' }
    case 'no-since':
      return { text: 'Give the time to recover from.', kind: 'error' }
    default:
      return undefined
  }
}

/**
 * `datetime-local` gives a time without a zone: the form says it is UTC. Read as the JSON API reads
 * times (src/domain/iso-timestamp.ts): a four-digit year, a real date, so the database can store it.
 */
const readSince = (text: string | undefined): Date | undefined => (text ? parseIsoTimestamp(text) : undefined)

/**
 * Callback endpoints of every account (docs/api.md §8): state, failing since, waiting deliveries;
 * Enable a disabled one (its waiting deliveries go out), Recover the failed and dead deliveries since
 * a time. Through the webhook platform's use cases in src/admin/endpoints.ts.
 */
export async function endpointRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const useCaseDeps = { db: deps.db, clock: deps.clock, onScheduled: deps.onDeliveryScheduled, sendTestEvent: deps.sendTestEvent }

  app.get<{ Querystring: Outcome }>('/dashboard/endpoints', async (request, reply) => {
    const csrfToken = request.dashboardSession!.csrfToken
    const [listed, accounts] = await Promise.all([listAllEndpoints(deps), listAccounts(deps)])
    const names = new Map(accounts.map((a) => [a.id, a.name]))
    // A default "since" an operator usually wants: the last 24 hours.
    const dayAgo = new Date(deps.clock().getTime() - 86_400_000).toISOString().slice(0, 16)
    const rows = listed.endpoints.map((e, i) => {
      const fields = { account: e.accountId, url: e.url }
      return html`<tr data-endpoint="${e.url}">
        <th scope="row"><code>${e.url}</code><br /><a href="/dashboard/accounts/${encodeURIComponent(e.accountId)}">${names.get(e.accountId) ?? e.accountId}</a></th>
        <td><span class="badge badge-${e.state === 'active' ? 'success' : 'failed'}" data-field="state">${e.state}</span>${e.disabledReason ? html`<br /><span class="muted">${e.disabledReason}</span>` : ''}</td>
        <td>${time(e.failingSince)}</td>
        <td>${time(e.lastSuccessAt)}</td>
        <td class="num">${e.pendingDeliveries}</td>
        <td class="actions">
          ${e.state === 'disabled' ? actionButton('/dashboard/endpoints/enable', 'Enable', csrfToken, fields) : ''}
          ${deps.sendTestEvent ? actionButton('/dashboard/endpoints/test', 'Send test event', csrfToken, fields) : ''}
          <form method="post" action="/dashboard/endpoints/recover" class="inline-form">
            ${csrfField(csrfToken)}<input type="hidden" name="account" value="${e.accountId}" /><input type="hidden" name="url" value="${e.url}" />
            <div class="field"><label for="since-${i}">Recover since (UTC)</label><input id="since-${i}" name="since" type="datetime-local" value="${dayAgo}" required /></div>
            <button type="submit">Recover</button>
          </form>
        </td>
      </tr>`
    })
    const said = outcomeText({ done: request.query.done, count: request.query.count })
    const content = html`${notice(said?.text, said?.kind)}
      ${
        rows.length === 0
          ? html`<p>No callback has been sent yet: an endpoint appears with its first attempt.</p>`
          : html`<div class="table-wrap"><table class="endpoints"><caption class="visually-hidden">Callback endpoints</caption>
            <thead><tr><th scope="col">Endpoint</th><th scope="col">State</th><th scope="col">Failing since</th><th scope="col">Last success</th><th scope="col">Waiting</th><th scope="col">Actions</th></tr></thead>
            <tbody>${rows}</tbody></table></div>`
      }`
    return sendPage(reply, page({ title: 'Endpoints', section: 'endpoints', csrfToken }, content))
  })

  const back = (outcome: Outcome) => `/dashboard/endpoints${queryString({ ...outcome })}`

  app.post<{ Body: Form }>('/dashboard/endpoints/enable', async (request, reply) => {
    const { account = '', url = '' } = request.body ?? {}
    const enabled = await enableEndpoint(useCaseDeps, account, url)
    const outcome = enabled.kind === 'enabled' ? { done: 'enabled', count: String(enabled.resumed) } : { done: enabled.kind }
    return reply.redirect(back(outcome), 303)
  })

  app.post<{ Body: Form }>('/dashboard/endpoints/recover', async (request, reply) => {
    const { account = '', url = '', since } = request.body ?? {}
    const from = readSince(since)
    if (!from) return reply.redirect(back({ done: 'no-since' }), 303)
    const recovered = await recoverEndpoint(useCaseDeps, account, url, from)
    const outcome = recovered.kind === 'recovered' ? { done: 'recovered', count: String(recovered.redelivered) } : { done: recovered.kind }
    return reply.redirect(back(outcome), 303)
  })

  app.post<{ Body: Form }>('/dashboard/endpoints/test', async (request, reply) => {
    const { account = '', url = '' } = request.body ?? {}
    const sent = await testEndpoint(useCaseDeps, account, url)
    return reply.redirect(back(sent.kind === 'sent' ? { done: 'tested' } : { done: sent.kind }), 303)
  })
}
