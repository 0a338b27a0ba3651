// The backoff policy table: delays step up to a ceiling while failures go on, start over on
// progress, spread by jitter within bounds, and wait at least what the provider asked for.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { backoffPolicies, createBackoff, delayFor, retryAfterMs } from '../../src/common/backoff.ts'

test('steps up to a bounded ceiling, and starts over once progress is reset', () => {
  const backoff = createBackoff(backoffPolicies.chainSync, () => 0.5)
  const waits = Array.from({ length: 7 }, () => backoff.next())
  assert.deepEqual(waits, [250, 500, 1_000, 2_000, 5_000, 5_000, 5_000], 'the last step is the ceiling')
  assert.equal(backoff.failures, 7)
  backoff.reset()
  assert.equal(backoff.failures, 0)
  assert.deepEqual([backoff.next(), backoff.next()], [250, 500], 'after progress, the first step again')
})

test('jitter spreads each step within its share, and a Retry-After is a floor', () => {
  const policy = { delaysMs: [100, 1_000], jitter: 0.5 }
  assert.equal(
    delayFor(policy, 1, () => 0),
    50,
  )
  assert.equal(
    delayFor(policy, 1, () => 0.999999),
    150,
  )
  assert.equal(
    delayFor(policy, 9, () => 0),
    500,
    'beyond the table: the ceiling, jittered',
  )
  const backoff = createBackoff(policy, () => 0.5)
  assert.equal(backoff.next(1_500), 1_500, 'at least what the provider asked for')
  assert.equal(backoff.next(10), 1_000)
  for (const policy of Object.values(backoffPolicies)) {
    assert.ok(
      policy.delaysMs.every((d, i) => i === 0 || d >= policy.delaysMs[i - 1]!),
      'each table grows',
    )
  }
})

test('Retry-After in seconds or as an HTTP date', () => {
  const now = Date.parse('Wed, 25 Nov 2026 10:00:00 GMT')
  assert.equal(retryAfterMs('2', now), 2_000)
  assert.equal(retryAfterMs('Wed, 25 Nov 2026 10:00:05 GMT', now), 5_000)
  assert.equal(retryAfterMs('soon', now), undefined)
  assert.equal(retryAfterMs(null, now), undefined)
})

test('the policies that replaced hand-written backoffs keep their delays', () => {
  for (let attempt = 0; attempt <= 10; attempt++) {
    assert.equal(
      delayFor(backoffPolicies.fastPathCheck, attempt + 1),
      Math.min(60_000, 1_000 * 2 ** attempt),
      `fast path, attempt ${attempt}`,
    )
    assert.equal(delayFor(backoffPolicies.listenReconnect, attempt + 1), Math.min(200 * 2 ** attempt, 10_000), `LISTEN, attempt ${attempt}`)
    assert.equal(delayFor(backoffPolicies.chainRunnerRestart, attempt + 1), 1_000)
  }
})
