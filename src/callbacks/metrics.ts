import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import type { Clock } from '../common/clock.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { deliveryQueueStats } from '../store/deliveries.ts'
import { endpointCountsByState } from '../store/webhook-endpoints.ts'

export interface CallbackMetrics {
  attempts: Counter<'outcome'>
  dead: Counter
  duration: Histogram
  /** Endpoints disabled, by reason: `gone` (410) or `failing` (nothing but failures for the configured time). */
  endpointsDisabled: Counter<'reason'>
  /** Reversal events by event and whether they were sent (opt-in) or only recorded. */
  reversalEvents: Counter<'event' | 'sent'>
}

/**
 * Attempts by outcome, deliveries given up, attempt duration; queue depth and the age of the oldest
 * overdue delivery are read from the database when scraped (they are shared by every node).
 */
export function createCallbackMetrics(registry: Registry, db: Db, clock: Clock): CallbackMetrics {
  let stats: { at: number; value: Promise<{ due: number; oldestOverdue: Date | null }> } | undefined
  // Both gauges are collected in one scrape: one query serves them.
  const readStats = () => {
    const now = clock()
    if (!stats || Math.abs(now.getTime() - stats.at) > 1000) stats = { at: now.getTime(), value: deliveryQueueStats(db, now) }
    return stats.value
  }
  new Gauge({
    name: 'paywatch_callback_queue_depth',
    help: 'Callback deliveries waiting (due now or for a retry)',
    registers: [registry],
    async collect() {
      this.set(
        await readStats().then(
          (s) => s.due,
          () => Number.NaN,
        ),
      )
    },
  })
  new Gauge({
    name: 'paywatch_callback_oldest_due_age_seconds',
    help: 'Age of the oldest callback delivery that is due and not yet made',
    registers: [registry],
    async collect() {
      this.set(
        await readStats().then(
          (s) => (s.oldestOverdue ? Math.max(0, (clock().getTime() - s.oldestOverdue.getTime()) / 1000) : 0),
          () => Number.NaN,
        ),
      )
    },
  })
  new Gauge({
    name: 'paywatch_callback_endpoints',
    help: 'Callback endpoints (account, scheme://host[:port]) by state: active or disabled',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const counts = await endpointCountsByState(db).catch(() => null)
      for (const state of ['active', 'disabled'] as const) this.set({ state }, counts ? (counts[state] ?? 0) : Number.NaN)
    },
  })
  return {
    endpointsDisabled: new Counter({
      name: 'paywatch_callback_endpoints_disabled_total',
      help: 'Callback endpoints disabled, by reason: gone (answered 410) or failing (only failures for PAYWATCH_ENDPOINT_DISABLE_AFTER)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    reversalEvents: new Counter({
      name: 'paywatch_payment_reversal_events_total',
      help: 'payment.reverted / payment.reconfirmed events, by whether they were sent (integration opted in) or only recorded',
      labelNames: ['event', 'sent'],
      registers: [registry],
    }),
    attempts: new Counter({
      name: 'paywatch_callback_attempts_total',
      help: 'Callback attempts by outcome (delivered, accepted, failed, refused)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    dead: new Counter({
      name: 'paywatch_callback_deliveries_dead_total',
      help: 'Callback deliveries given up after the last retry or refused',
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'paywatch_callback_attempt_duration_seconds',
      help: 'Callback attempt duration (signing and HTTP exchange)',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
  }
}
