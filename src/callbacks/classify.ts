import { retryAfterMs } from '../common/backoff.ts'
import { isRetryable } from '../common/errors.ts'
import { afterFailure, type RandomSource } from '../domain/retry-schedule.ts'
import type { AttemptOutcome } from '../store/attempt-records.ts'
import type { SendResult } from './sender.ts'

/** Longest `Retry-After` honoured: a receiver cannot park a delivery for longer than a day. */
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000

/**
 * docs/api.md §4 and §8: 200 → delivered (release now); 202 → accepted (release waits); a forbidden
 * address → dead at once (retrying cannot help; redeliverable); anything else, a 3xx (never followed), a
 * timeout or a connection error → retried on the schedule, dead after the last retry. A 429 or 503 with
 * `Retry-After` is retried no earlier than it asks; a 410 is a failed attempt that also disables the
 * endpoint (`gone`). A 200 or 202 whose answer did not end within the timeout (or whose connection broke
 * mid-answer) is such a timeout or connection error: the receiver may not have finished handling it.
 */
export function classifyAttempt(
  result: SendResult,
  attemptsBefore: number,
  now: Date,
  random: RandomSource,
): Pick<AttemptOutcome, 'outcome' | 'next'> & { gone: boolean } {
  // Asked by type, as every retry site asks (src/common/errors.ts): a failure that retrying cannot help.
  if (result.failure && !isRetryable(result.failure)) return { outcome: 'refused', next: { state: 'dead' }, gone: false }
  const answered = result.error === null
  if (answered && result.statusCode === 200) return { outcome: 'delivered', next: { state: 'delivered' }, gone: false }
  if (answered && result.statusCode === 202) return { outcome: 'accepted', next: { state: 'accepted' }, gone: false }
  const gone = result.statusCode === 410
  const step = afterFailure(attemptsBefore, now, random)
  if (step.kind === 'dead') return { outcome: 'failed', next: { state: 'dead' }, gone }
  const asked = result.statusCode === 429 || result.statusCode === 503 ? retryAfterMs(result.retryAfter, now.getTime()) : undefined
  const at = asked === undefined ? step.at : new Date(Math.max(step.at.getTime(), now.getTime() + Math.min(MAX_RETRY_AFTER_MS, asked)))
  return { outcome: 'failed', next: { state: 'due', at }, gone }
}
