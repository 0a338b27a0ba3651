import type { Logger } from 'pino'
import type { Clock } from '../common/clock.ts'
import type { RandomSource } from '../domain/retry-schedule.ts'
import type { AttemptOutcome } from '../store/attempt-records.ts'
import type { ClaimedDelivery } from '../store/deliveries.ts'
import { logAttempt } from './attempt-log.ts'
import { classifyAttempt } from './classify.ts'
import type { CallbackMetrics } from './metrics.ts'
import type { SendResult } from './sender.ts'

export interface AttemptOutcomeContext {
  clock: Clock
  random: RandomSource
  metrics: CallbackMetrics
  logger: Logger
  /** The worker's name, in the attempt log. */
  worker: string
}

/**
 * What one attempt's result means for its delivery (docs/api.md §4), counted in the metrics and, when
 * it did not deliver, logged: the outcome to record.
 */
export function attemptOutcome(
  context: AttemptOutcomeContext,
  delivery: ClaimedDelivery,
  result: SendResult,
  startedAt: Date,
): AttemptOutcome {
  const classified = classifyAttempt(result, delivery.attempts, context.clock(), context.random)
  context.metrics.attempts.inc({ outcome: classified.outcome })
  context.metrics.duration.observe(result.durationMs / 1000)
  if (classified.next.state === 'dead') context.metrics.dead.inc()
  logAttempt(context.logger, delivery, classified, result)
  return {
    delivery,
    worker: context.worker,
    startedAt,
    durationMs: result.durationMs,
    statusCode: result.statusCode,
    error: result.error,
    excerpt: result.excerpt,
    forwardTo: result.forwardTo,
    ...classified,
  }
}
