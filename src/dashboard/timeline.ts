import type { Tracking } from '../domain/tracking.ts'
import type { AttemptRow, DeliveryRow } from '../store/deliveries.ts'
import type { SeenTransaction } from '../store/payment-timeline.ts'
import { address, duration, shortHash, time } from './format.ts'
import { html, type Html } from './html.ts'
import type { Progress } from './progress-memory.ts'

/** Who asked for a redelivery, as the timeline says it. */
const REQUESTERS: Record<string, string> = {
  api: 'through the API',
  dashboard: 'from the dashboard',
  cli: 'with the CLI',
  recovery: 'by an endpoint recovery',
}

interface Step {
  at: Date | null
  /** Orders steps of the same time: creation before sighting before judgement before callbacks. */
  rank: number
  what: Html
  kind: string
  /** Shown instead of a time when the step has none. */
  untimed?: string
}

/**
 * What happened to a payment, in order: created, transaction seen, confirmations, judged, each
 * callback delivery and attempt (time, answer status, duration), release. Built from the stored rows.
 */
export function timeline(
  tracking: Tracking,
  seen: SeenTransaction | undefined,
  progress: Progress | undefined,
  deliveries: (DeliveryRow & { attemptLog: AttemptRow[] })[],
): Html {
  const steps: Step[] = [
    {
      at: tracking.createdAt,
      rank: 0,
      kind: 'created',
      what: tracking.nonceless
        ? html`Created on ${tracking.blockchain}, waiting for a payment to ${address(tracking.receiver)}${tracking.sender ? html` from ${address(tracking.sender)}` : ''}${tracking.deadline !== null ? html` by ${deadlineText(tracking.deadline)}` : ''}`
        : html`Created on ${tracking.blockchain}, waiting for nonce ${String(tracking.nonce)} of ${address(tracking.sender)}`,
    },
  ]
  if (seen) {
    steps.push({
      at: seen.seenAt,
      rank: 1,
      kind: 'seen',
      what: html`Transaction ${shortHash(seen.transaction)} seen in block ${seen.blockNumber.toString()}`,
    })
  }
  if (tracking.status === 'pending' && progress) {
    steps.push({
      at: null,
      untimed: 'now',
      rank: 2,
      kind: 'confirmations',
      what: html`Confirmations: <span data-field="timeline-confirmations">${progress.passed} of ${progress.required}</span>`,
    })
  }
  if (tracking.status !== 'pending') {
    const judged = tracking.confirmedAt ?? tracking.updatedAt
    steps.push({
      at: judged,
      rank: 3,
      kind: `judged-${tracking.status}`,
      what:
        tracking.status === 'success'
          ? html`Judged <strong>success</strong>: transaction ${shortHash(tracking.transaction)}`
          : html`Judged <strong>failed</strong>: <code>${tracking.failedReason}</code>`,
    })
  }
  for (const delivery of deliveries) {
    // Reversal events (payment.reverted / payment.reconfirmed) are recorded as deliveries of their own.
    if (delivery.event === 'payment.reverted') {
      steps.push({
        at: delivery.created_at,
        rank: 4,
        kind: 'reverted',
        what: html`<strong>Reversal</strong>: the paying transaction left the canonical chain`,
      })
    } else if (delivery.event === 'payment.reconfirmed') {
      steps.push({
        at: delivery.created_at,
        rank: 4,
        kind: 'reconfirmed',
        what: html`Reconfirmed: the paying transaction is back on the chain`,
      })
    }
    if (delivery.reason === 'redeliver' || delivery.requested_by) {
      const by = delivery.requested_by ? REQUESTERS[delivery.requested_by] : ''
      steps.push({
        // A due delivery brought forward was asked for when it was last updated.
        at: delivery.reason === 'redeliver' ? delivery.created_at : delivery.updated_at,
        rank: 4,
        kind: `redeliver${delivery.requested_by ? ` step-redeliver-${delivery.requested_by}` : ''}`,
        what: html`Redelivery requested${by ? html` <strong class="requester">${by}</strong>` : ''} (delivery <code>${delivery.id.slice(0, 8)}</code>)`,
      })
    }
    const what = delivery.event ? `${delivery.event} event` : 'Callback'
    for (const attempt of delivery.attemptLog) {
      steps.push({
        at: attempt.started_at,
        rank: 5,
        kind: `attempt attempt-${attempt.outcome}`,
        what: html`${what} attempt ${attempt.attempt}: ${attempt.status_code === null ? html`<strong>no answer</strong>` : html`answered <strong>${attempt.status_code}</strong>`}
          in ${duration(attempt.duration_ms)}, ${attempt.outcome}${attempt.error ? html` <span class="muted">(${attempt.error})</span>` : ''}`,
      })
    }
    if (delivery.state === 'due') steps.push({ at: delivery.next_attempt_at, rank: 6, kind: 'due', what: html`Next callback attempt due` })
    if (delivery.state === 'dead')
      steps.push({ at: delivery.finished_at, rank: 6, kind: 'dead', what: html`Callback given up after ${delivery.attempts} attempts` })
  }
  if (tracking.release)
    steps.push({
      at: tracking.releasedAt ?? null,
      untimed: 'released (time not recorded)',
      rank: 7,
      kind: 'released',
      what: html`The waiting user was released`,
    })
  // Steps without a time (the current confirmations, the release) come after the timed ones.
  const key = (step: Step) => step.at?.getTime() ?? Number.MAX_SAFE_INTEGER
  const ordered = steps.sort((a, b) => key(a) - key(b) || a.rank - b.rank)
  return html`<ol class="timeline">${ordered.map((step) => html`<li class="step step-${step.kind}">${step.at ? time(step.at) : html`<span class="muted">${step.untimed ?? ''}</span>`} <span>${step.what}</span></li>`)}</ol>`
}

/** A deadline (Unix seconds) as an ISO time, or the raw number when it is beyond what a Date holds. */
export function deadlineText(deadline: bigint): string {
  const ms = Number(deadline) * 1000
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : `${deadline} (Unix seconds)`
}
