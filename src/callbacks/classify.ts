import { afterFailure, type RandomSource } from '../domain/retry-schedule.ts'
import type { AttemptOutcome } from '../store/deliveries.ts'
import type { SendResult } from './sender.ts'

/**
 * docs/api.md §4: 200 → delivered (release now); 202 → accepted (release waits); a forbidden address
 * → dead at once (retrying cannot help; redeliverable); anything else, a timeout or a connection error
 * → retried on the schedule, dead after the last retry. A 200 or 202 whose answer did not end within the
 * timeout (or whose connection broke mid-answer) is such a timeout or connection error: the receiver may
 * not have finished handling the callback.
 */
export function classifyAttempt(
  result: SendResult,
  attemptsBefore: number,
  now: Date,
  random: RandomSource,
): Pick<AttemptOutcome, 'outcome' | 'next'> {
  if (result.refused) return { outcome: 'refused', next: { state: 'dead' } }
  const answered = result.error === null
  if (answered && result.statusCode === 200) return { outcome: 'delivered', next: { state: 'delivered' } }
  if (answered && result.statusCode === 202) return { outcome: 'accepted', next: { state: 'accepted' } }
  const step = afterFailure(attemptsBefore, now, random)
  return { outcome: 'failed', next: step.kind === 'dead' ? { state: 'dead' } : { state: 'due', at: step.at } }
}
