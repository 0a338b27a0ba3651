import type { TrackingEvents } from '../common/tracking-events.ts'
import type { CallbackMetrics } from './metrics.ts'

/**
 * Reversal events (docs/api.md §8) are recorded by the chain engine with their event delivery (due when
 * the integration opted in, else `skipped`) in the transaction that notices them; here they are counted
 * and a due one wakes the worker. Answers the function that stops listening.
 */
export function followReversalEvents(events: TrackingEvents, metrics: CallbackMetrics, wake: () => void): () => void {
  const count = (event: string, sent: boolean) => {
    metrics.reversalEvents.inc({ event, sent: String(sent) })
    if (sent) wake()
  }
  const onReverted = (e: { sent?: boolean }) => count('payment.reverted', e.sent === true)
  const onReconfirmed = (e: { sent: boolean }) => count('payment.reconfirmed', e.sent)
  events.on('reverted', onReverted)
  events.on('reconfirmed', onReconfirmed)
  return () => {
    events.off('reverted', onReverted)
    events.off('reconfirmed', onReconfirmed)
  }
}
