import type { Tracking } from '../domain/tracking.ts'

/** What the waiting widget is told on its PaymentChannel (docs/api.md §4). */
export type WidgetMessage =
  | { confirmations: { required: number; passed: number } }
  | { status: 'success' | 'failed'; release: boolean; forward_to: string | null; failed_reason: string | null }

export const confirmationsMessage = (required: number, passed: number): WidgetMessage => ({ confirmations: { required, passed } })

/**
 * The final state of a completed tracking. A failed payment forwards the user only when the
 * integrator asked for it (`forward_on_failure`); otherwise `forward_to` is null so the widget lets
 * the user retry instead.
 */
export function statusMessage(tracking: Tracking): WidgetMessage | undefined {
  if (tracking.status === 'pending') return undefined
  const forwards = tracking.status === 'success' || tracking.forwardOnFailure
  return {
    status: tracking.status,
    release: tracking.release,
    forward_to: forwards ? tracking.forwardTo : null,
    failed_reason: tracking.status === 'failed' ? tracking.failedReason : null,
  }
}
