import type { FastifyInstance } from 'fastify'
import { countPendingTrackings, type PendingCounts } from '../store/pending-counts.ts'
import { createChartCache } from './chart-cache.ts'
import { chart, fillBuckets } from './charts.ts'
import type { ChainState, DashboardDeps } from './deps.ts'
import { html, type Html } from './html.ts'
import { page, sendPage } from './layout.ts'

/** The charts cover the last three hours: payments per minute, callback latency per five minutes. */
const HOURS = 3
const COUNT_BUCKET_S = 60
const LATENCY_BUCKET_S = 300

export function chainRows(chains: ChainState[], pending: PendingCounts): Html {
  if (chains.length === 0) return html`<p>No chain is configured.</p>`
  return html`<div class="table-wrap"><table>
    <caption class="visually-hidden">Tracked chains</caption>
    <thead><tr><th scope="col">Chain</th><th scope="col">State</th><th scope="col">Head</th><th scope="col">Head age</th><th scope="col">Pending</th></tr></thead>
    <tbody>
    ${chains.map(
      (chain) => html`<tr data-chain="${chain.name}">
        <th scope="row">${chain.name}</th>
        <td>${chain.ok ? html`<span class="badge badge-success">ready</span>` : html`<span class="badge badge-failed">not ready</span>`}${chain.error ? html` <span class="muted">${chain.error}</span>` : ''}</td>
        <td class="num" data-field="head">${chain.head ?? '—'}</td>
        <td class="num">${chain.headAgeSeconds === undefined ? '—' : `${chain.headAgeSeconds} s`}</td>
        <td class="num" data-field="pending"${pending.estimated ? html` title="estimated from the database's statistics"` : ''}>${pendingText(pending, chain.name)}</td>
      </tr>`,
    )}
    </tbody></table></div>
    ${chains.filter((chain) => chain.providers?.length).map(providerTable)}`
}

/** Past 10,000 pending the count is the planner's estimate: shown rounded, with a "≈". */
function pendingText(pending: PendingCounts, chain: string): string {
  const count = pending.counts.get(chain) ?? 0
  if (!pending.estimated) return String(count)
  const rounded = Number(count.toPrecision(Math.min(3, String(count).length)))
  return `≈${rounded.toLocaleString('en')}`
}

function providerTable(chain: ChainState): Html {
  return html`<div class="table-wrap"><table>
    <caption>Providers of ${chain.name}</caption>
    <thead><tr><th scope="col">Provider</th><th scope="col">State</th><th scope="col">Head</th><th scope="col">Lag</th><th scope="col">Capabilities</th></tr></thead>
    <tbody>
    ${(chain.providers ?? []).map(
      (provider) => html`<tr>
        <th scope="row"><code>${provider.url}</code></th>
        <td>${provider.state ?? '—'}</td>
        <td class="num">${provider.head ?? '—'}</td>
        <td class="num">${provider.lag ?? '—'}</td>
        <td>${capabilities(provider.capabilities)}</td>
      </tr>`,
    )}
    </tbody></table></div>`
}

const capabilities = (names: readonly string[]): string => (names.length > 0 ? names.join(', ') : 'none found')

/** The overview: each chain's head and pending count, and the last hours in two charts. Live (see live.ts). */
export async function overviewRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const charts = createChartCache(deps.db, COUNT_BUCKET_S, LATENCY_BUCKET_S)
  app.get('/dashboard', async (request, reply) => {
    const now = deps.clock()
    const countStart = new Date(Math.floor(now.getTime() / 1000 / COUNT_BUCKET_S - HOURS * 60 + 1) * COUNT_BUCKET_S * 1000)
    const latencyStart = new Date(
      Math.floor(now.getTime() / 1000 / LATENCY_BUCKET_S - (HOURS * 3600) / LATENCY_BUCKET_S + 1) * LATENCY_BUCKET_S * 1000,
    )
    const [chains, pending, completed, latency] = await Promise.all([
      deps.chainReadiness() as Promise<ChainState[]>,
      countPendingTrackings(deps.db, deps.chainNames),
      charts.completed(countStart, now),
      charts.latency(latencyStart, now),
    ])
    const countSlots = (HOURS * 3600) / COUNT_BUCKET_S
    const latencySlots = (HOURS * 3600) / LATENCY_BUCKET_S
    const completedValues = fillBuckets(completed, countStart, COUNT_BUCKET_S, countSlots, (row) => row.count, 0)
    const total = completedValues.reduce((a, b) => a + b, 0)
    const attempts = latency.reduce((sum, row) => sum + row.attempts, 0)
    const slowest = Math.max(0, ...latency.map((row) => row.max, null))
    const content = html`<section aria-labelledby="chains-h"><h2 id="chains-h">Chains</h2>${chainRows(chains, pending)}</section>
      <section aria-labelledby="charts-h" class="charts"><h2 id="charts-h">Last ${HOURS} hours</h2><div class="chart-row">
        ${chart({
          title: `Payments completed per minute (${total} in ${HOURS} h)`,
          summary: `${total} payments completed in the last ${HOURS} hours, at most ${Math.max(0, ...completedValues)} in one minute`,
          start: countStart,
          bucketSeconds: COUNT_BUCKET_S,
          unit: '',
          kind: 'bars',
          series: [{ label: 'completed', values: completedValues, className: 's-count' }],
        })}
        ${chart({
          title: `Callback latency per 5 minutes (${attempts} attempts)`,
          summary: `${attempts} callback attempts in the last ${HOURS} hours, the slowest took ${slowest} ms`,
          start: latencyStart,
          bucketSeconds: LATENCY_BUCKET_S,
          unit: 'ms',
          kind: 'lines',
          series: [
            {
              label: 'median',
              values: fillBuckets(latency, latencyStart, LATENCY_BUCKET_S, latencySlots, (row) => row.p50, null),
              className: 's-p50',
            },
            {
              label: 'slowest',
              values: fillBuckets(latency, latencyStart, LATENCY_BUCKET_S, latencySlots, (row) => row.max, null),
              className: 's-max',
            },
          ],
        })}
      </div></section>`
    return sendPage(
      reply,
      page({ title: 'Overview', section: 'overview', csrfToken: request.dashboardSession!.csrfToken, live: 'overview' }, content),
    )
  })
}
