import type { FastifyInstance } from 'fastify'
import { listPaymentDeliveries, redeliverCallback } from '../admin/deliveries.ts'
import { type Tracking } from '../domain/tracking.ts'
import { fullRecord } from '../domain/records.ts'
import { findTrackingsBySecretAnyAccount } from '../store/dashboard-payments.ts'
import { findSeenTransaction } from '../store/payment-timeline.ts'
import type { DashboardDeps } from './deps.ts'
import { address, amount, confirmations, shortHash, statusBadge } from './format.ts'
import { findAccount } from '../store/accounts.ts'
import { html, queryString } from './html.ts'
import { actionButton, notice, page, sendPage } from './layout.ts'
import type { ProgressMemory } from './progress-memory.ts'
import { deadlineText, timeline } from './timeline.ts'

interface PaymentParams {
  secretId: string
}
interface PaymentQuery {
  account?: string
  notice?: string
}

/** By the code a redirect carries (`?notice=`): a Map, so no code from a link reaches an object's prototype. */
const NOTICES = new Map<string, [string, 'ok' | 'error']>(
  Object.entries({
    redelivered: ['The callback is due again: a new attempt is on its way.', 'ok'],
    pending: ['The payment is still pending: its callback goes out when it completes.', 'error'],
    'no-callback': ['This payment has no callback URL.', 'error'],
  }) as [string, [string, 'ok' | 'error']][],
)

/** The tracking a page is about: secret ids are unique per account, so `account` picks one when several share it. */
async function findPayment(deps: DashboardDeps, secretId: string, accountId: string | undefined) {
  const all = await findTrackingsBySecretAnyAccount(deps.db, secretId)
  return { tracking: all.find((t) => !accountId || t.accountId === accountId), others: all.length }
}

const paymentUrl = (t: Tracking, extra: Record<string, string | undefined> = {}) =>
  `/dashboard/payments/${encodeURIComponent(t.secretId)}${queryString({ account: t.accountId, ...extra })}`

/**
 * The commitment as a requirement while pending ("confirmed: needs 1 confirmation, waiting for the
 * transaction"), as reached once judged: a pending payment never reads as if it were confirmed.
 */
function commitmentText(tracking: Tracking, seen: boolean): string {
  const needed = tracking.commitment === 'finalized' ? 'needs a finalized block' : `needs ${confirmations(tracking.confirmations)}`
  if (tracking.status === 'pending') return `${tracking.commitment}: ${needed}${seen ? '' : ', waiting for the transaction'}`
  return tracking.commitment === 'finalized' ? 'finalized' : `${tracking.commitment}, ${confirmations(tracking.confirmations)}`
}

/** A payment's page: status, record, timeline from creation to the last callback attempt, and Redeliver. */
export async function paymentPageRoutes(app: FastifyInstance, deps: DashboardDeps & { progress: ProgressMemory }): Promise<void> {
  app.get<{ Params: PaymentParams; Querystring: PaymentQuery }>('/dashboard/payments/:secretId', async (request, reply) => {
    const csrfToken = request.dashboardSession!.csrfToken
    const { tracking, others } = await findPayment(deps, request.params.secretId, request.query.account)
    if (!tracking) {
      return sendPage(
        reply,
        page(
          { title: 'Payment not found', section: 'payments', csrfToken },
          html`<p>No payment has the secret_id <code>${request.params.secretId}</code>.</p>`,
        ),
        404,
      )
    }
    const [listed, seen, account, symbol] = await Promise.all([
      listPaymentDeliveries(deps, tracking.accountId, tracking.secretId),
      findSeenTransaction(deps.db, tracking.id),
      findAccount(deps.db, tracking.accountId),
      deps.tokenSymbol?.(tracking.blockchain, tracking.token) ?? null,
    ])
    const deliveries = listed.kind === 'listed' ? listed.deliveries : []
    // The chain's head only when the confirmations are not known from this node's engine.
    const needHead = tracking.status === 'pending' && seen && !deps.progress.of(tracking.id)
    const head = needHead ? (await deps.chainReadiness()).find((c) => c.name === tracking.blockchain)?.head : undefined
    const progress =
      tracking.status === 'pending'
        ? (deps.progress.of(tracking.id) ??
          (seen && head
            ? {
                required: tracking.confirmations,
                passed: Math.max(0, Math.min(tracking.confirmations, Number(BigInt(head) - seen.blockNumber + 1n))),
              }
            : undefined))
        : undefined
    const [noticeText, noticeKind] = NOTICES.get(request.query.notice ?? '') ?? []
    const content = html`${notice(noticeText, noticeKind)}
      ${others > 1 ? html`<p class="notice notice-ok">${others} accounts have a payment with this secret_id; this is the one of account <code>${tracking.accountId}</code>.</p>` : ''}
      <section class="card facts" aria-labelledby="status-h">
        <h2 id="status-h">Status: <span data-field="status">${statusBadge(tracking.status)}</span>${tracking.failedReason ? html` <code>${tracking.failedReason}</code>` : ''}</h2>
        ${
          tracking.status === 'pending'
            ? html`<p>Confirmations: <strong data-field="confirmations" aria-live="polite">${progress ? `${progress.passed} of ${progress.required}` : 'transaction not seen yet'}</strong></p>`
            : ''
        }
        <dl>
          <dt>Account</dt><dd><a href="/dashboard/accounts/${tracking.accountId}" data-field="account">${account?.name ?? tracking.accountId}</a>${account ? html` <code class="muted">${tracking.accountId}</code>` : ''}</dd>
          <dt>Chain</dt><dd>${tracking.blockchain}</dd>
          <dt>Amount</dt><dd data-field="amount">${amount(tracking.amount, symbol)}${tracking.feeAmount ? html` (fee ${amount(tracking.feeAmount, symbol)})` : ''}</dd>
          <dt>Token</dt><dd>${address(tracking.token)}</dd>
          <dt>Sender</dt><dd>${address(tracking.sender)}${tracking.nonce !== null ? ` nonce ${tracking.nonce}` : tracking.nonceless ? html` <span class="muted">(no nonce: found by receiver)</span>` : ''}</dd>
          <dt>Deadline</dt><dd>${tracking.deadline !== null ? deadlineText(tracking.deadline) : html`<span class="muted">none</span>`}</dd>
          <dt>Receiver</dt><dd>${address(tracking.receiver)}</dd>
          <dt>Transaction</dt><dd>${tracking.transaction || seen ? shortHash(tracking.transaction ?? seen?.transaction) : html`<span class="muted" data-field="transaction">waiting for the transaction</span>`}</dd>
          <dt>Commitment</dt><dd data-field="commitment">${commitmentText(tracking, seen !== undefined)}</dd>
          <dt>Callback</dt><dd>${tracking.callback ? html`<code>${tracking.callback}</code>` : html`<span class="muted">none</span>`}</dd>
          <dt>Released</dt><dd>${tracking.release ? 'yes' : 'no'}</dd>
        </dl>
        ${tracking.callback && tracking.status !== 'pending' ? actionButton(`/dashboard/payments/${encodeURIComponent(tracking.secretId)}/redeliver`, 'Redeliver', csrfToken, { account: tracking.accountId }) : ''}
      </section>
      <section aria-labelledby="timeline-h"><h2 id="timeline-h">Timeline</h2>${timeline(tracking, seen, progress, deliveries)}</section>
      <details class="card"><summary>Record</summary><pre>${JSON.stringify(fullRecord(tracking), null, 2)}</pre></details>`
    const live = tracking.status === 'pending' || deliveries.some((d) => d.state === 'due') ? `payment:${tracking.id}` : undefined
    return sendPage(reply, page({ title: `Payment ${tracking.secretId}`, section: 'payments', csrfToken, live }, content))
  })

  app.post<{ Params: PaymentParams; Body: { account?: string } }>('/dashboard/payments/:secretId/redeliver', async (request, reply) => {
    const { tracking } = await findPayment(deps, request.params.secretId, request.body?.account)
    if (!tracking) return reply.redirect(`/dashboard/payments/${encodeURIComponent(request.params.secretId)}`, 303)
    const outcome = await redeliverCallback(
      { db: deps.db, clock: deps.clock, onScheduled: deps.onDeliveryScheduled },
      tracking.accountId,
      tracking.secretId,
      'dashboard',
    )
    const code = outcome.kind === 'scheduled' ? 'redelivered' : outcome.kind === 'not-found' ? undefined : outcome.kind
    return reply.redirect(paymentUrl(tracking, { notice: code }), 303)
  })
}
