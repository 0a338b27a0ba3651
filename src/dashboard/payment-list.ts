import type { FastifyInstance } from 'fastify'
import { listAccounts } from '../admin/accounts.ts'
import { searchPayments, type PaymentQuery } from '../store/dashboard-payments.ts'
import { parseIsoTimestamp } from '../domain/iso-timestamp.ts'
import type { DashboardDeps } from './deps.ts'
import { address, amount, statusBadge, time } from './format.ts'
import { html, queryString } from './html.ts'
import { page, sendPage } from './layout.ts'

const PAGE_SIZE = 50
const STATUSES = ['pending', 'success', 'failed'] as const

interface ListQuery {
  q?: string
  status?: string
  chain?: string
  account?: string
  before?: string
}

/**
 * `before` is the last row of the previous page: `<ISO created_at>_<id>`. The time is read as the JSON
 * API reads times (a four-digit year, a real date), so no cursor names a time the database cannot hold.
 */
function readCursor(text: string | undefined): PaymentQuery['before'] {
  const at = text?.indexOf('_') ?? -1
  if (!text || at < 0) return undefined
  const createdAt = parseIsoTimestamp(text.slice(0, at))
  return createdAt ? { createdAt, id: text.slice(at + 1) } : undefined
}

const option = (value: string, label: string, selected: string | undefined) =>
  html`<option value="${value}"${value === (selected ?? '') ? html` selected` : ''}>${label}</option>`

/** Payments: search by secret_id, sender or transaction; filter by status, chain, account; newest first, paged. */
export async function paymentListRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  app.get<{ Querystring: ListQuery }>('/dashboard/payments', async (request, reply) => {
    const query = request.query
    const status = STATUSES.find((s) => s === query.status)
    const [found, accounts] = await Promise.all([
      searchPayments(deps.db, {
        search: query.q?.slice(0, 200),
        status,
        chain: query.chain || undefined,
        accountId: query.account || undefined,
        before: readCursor(query.before),
        limit: PAGE_SIZE,
      }),
      listAccounts(deps),
    ])
    const accountNames = new Map(accounts.map((a) => [a.id, a.name]))
    const next = found.next
    const symbols = await symbolsOf(deps, found.trackings)
    const filters = { q: query.q, status, chain: query.chain, account: query.account }
    const content = html`<form method="get" action="/dashboard/payments" class="filters" role="search">
        <div class="field grow"><label for="q">Search</label>
          <input id="q" name="q" type="search" value="${query.q ?? ''}" placeholder="secret_id, sender or transaction" /></div>
        <div class="field"><label for="status">Status</label><select id="status" name="status">
          ${option('', 'any', status)}${STATUSES.map((s) => option(s, s, status))}</select></div>
        <div class="field"><label for="chain">Chain</label><select id="chain" name="chain">
          ${option('', 'any', query.chain)}${deps.chainNames.map((name) => option(name, name, query.chain))}</select></div>
        <div class="field"><label for="account">Account</label><select id="account" name="account">
          ${option('', 'any', query.account)}${accounts.map((a) => option(a.id, a.name, query.account))}</select></div>
        <button type="submit">Apply</button>
      </form>
      ${
        found.trackings.length === 0
          ? html`<p role="status">${next ? 'No payment matches among the most recent ones searched; Older searches on.' : 'No payment matches.'}</p>`
          : html`<div class="table-wrap"><table class="payments stack-narrow">
        <caption class="visually-hidden">Payments, newest first</caption>
        <thead><tr><th scope="col">secret_id</th><th scope="col">Status</th><th scope="col">Chain</th><th scope="col">Amount</th><th scope="col">Sender</th><th scope="col">Account</th><th scope="col">Created</th></tr></thead>
        <tbody>${found.trackings.map(
          (t) => html`<tr>
            <th scope="row"><a href="/dashboard/payments/${encodeURIComponent(t.secretId)}">${t.secretId}</a></th>
            <td data-label="Status">${statusBadge(t.status)}</td><td data-label="Chain">${t.blockchain}</td><td class="num" data-label="Amount">${amount(t.amount, symbols.get(`${t.blockchain}:${t.token}`))}</td>
            <td data-label="Sender">${address(t.sender)}</td><td data-label="Account">${accountNames.get(t.accountId) ?? t.accountId}</td><td data-label="Created">${time(t.createdAt)}</td>
          </tr>`,
        )}</tbody></table></div>`
      }
      <nav aria-label="Pages" class="pager">
        ${query.before ? html`<a href="/dashboard/payments${queryString(filters)}">Newest</a>` : ''}
        ${next ? html`<a href="/dashboard/payments${queryString({ ...filters, before: `${next.createdAt.toISOString()}_${next.id}` })}">Older</a>` : ''}
      </nav>`
    return sendPage(reply, page({ title: 'Payments', section: 'payments', csrfToken: request.dashboardSession!.csrfToken }, content))
  })
}

/** The symbol of each chain and token on the page, asked once per pair. */
async function symbolsOf(deps: DashboardDeps, trackings: { blockchain: string; token: string }[]): Promise<Map<string, string | null>> {
  const pairs = [...new Set(trackings.map((t) => `${t.blockchain}:${t.token}`))]
  const symbols = await Promise.all(
    pairs.map((pair) => {
      const [blockchain, token] = pair.split(':') as [string, string]
      return deps.tokenSymbol?.(blockchain, token) ?? null
    }),
  )
  return new Map(pairs.map((pair, i) => [pair, symbols[i]!]))
}
