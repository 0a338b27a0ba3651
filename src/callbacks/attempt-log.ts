import type { Logger } from 'pino'
import type { AttemptOutcome } from '../store/attempt-records.ts'
import type { ClaimedDelivery } from '../store/deliveries.ts'
import type { SendResult } from './sender.ts'

/** Logs an attempt that did not deliver: a warning when the delivery is dead, else an info line. */
export function logAttempt(
  logger: Logger,
  delivery: ClaimedDelivery,
  classified: Pick<AttemptOutcome, 'outcome' | 'next'>,
  result: SendResult,
): void {
  if (classified.outcome === 'delivered' || classified.outcome === 'accepted') return
  const fields = {
    delivery: delivery.id,
    tracking: delivery.trackingId,
    attempt: delivery.attempts + 1,
    outcome: classified.outcome,
    host: hostKey(delivery.tracking.callback),
    status: result.statusCode,
    error: withoutCallbackPath(result.error, delivery.tracking.callback),
    ms: result.durationMs,
    next: classified.next.state === 'due' ? classified.next.at.toISOString() : classified.next.state,
  }
  if (classified.next.state === 'dead') logger.warn(fields, 'callback delivery dead')
  else logger.info(fields, 'callback attempt failed')
}

/** The callback's host (with its port): the unit of the per-host limits and of the log. */
export function hostKey(callback: string | null): string {
  try {
    return callback ? new URL(callback).host : ''
  } catch {
    return ''
  }
}

/**
 * An attempt's error for the log: the callback's host is operator information and stays, its path and
 * query (which may carry a token of the integrator's) never reach a log line.
 */
function withoutCallbackPath(error: string | null, callback: string | null): string | undefined {
  if (error === null) return undefined
  if (!callback) return error
  try {
    const url = new URL(callback)
    return error.replaceAll(callback, url.origin).replaceAll(url.href, url.origin)
  } catch {
    return error
  }
}
