import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { MAX_CALLBACK_RETRIES, afterFailure, retryDelaySeconds } from '../../src/domain/retry-schedule.ts'
import {
  INTERRUPTED_ATTEMPT_ERROR,
  claimDueDeliveries,
  deliveryQueueStats,
  markSending,
  postponeDeliveries,
} from '../../src/store/deliveries.ts'
import { recordAttempts } from '../../src/store/attempt-records.ts'
import { manualClock } from '../support/clock.ts'
import { startTestService, type TestService } from '../support/service.ts'
import { deliveredOutcome, insertCompleted, startReceiver, type Receiver } from './support.ts'

test('retry delays follow (n ** 4) + 15 + (rand(30) * (n + 1))', () => {
  const low = () => 0
  const high = () => 0.999999
  assert.deepEqual(
    [0, 1, 2, 3, 4].map((n) => retryDelaySeconds(n, low)),
    [15, 16, 31, 96, 271],
  )
  assert.equal(retryDelaySeconds(0, high), 44)
  assert.equal(retryDelaySeconds(3, high), 81 + 15 + 29 * 4)
  const now = new Date('2026-01-01T00:00:00Z')
  assert.deepEqual(afterFailure(MAX_CALLBACK_RETRIES, now, low), { kind: 'dead' })
  const last = afterFailure(MAX_CALLBACK_RETRIES - 1, now, low)
  assert.equal(last.kind === 'retry' && last.delaySeconds, 24 ** 4 + 15)
  // 25 retries with the average rand(30) of 15 span about 21 days (docs/api.md §4).
  let total = 0
  for (let n = 0; n < MAX_CALLBACK_RETRIES; n++) total += retryDelaySeconds(n, () => 0.5)
  assert.ok(total / 86400 > 20 && total / 86400 < 21.5, `${total / 86400} days`)
})

const clock = manualClock(new Date('2026-03-01T12:00:00.000Z'))
/** A scripted random source: the values the worker drew, in order. */
const draws = [0.1, 0.95, 0.5, 0, 0.73]
let drawn = 0
const random = () => draws[drawn++ % draws.length]!
let service: TestService
let failing: Receiver

before(async () => {
  failing = await startReceiver(() => ({ status: 500 }))
  // No background worker: the test drives each attempt with the injected clock.
  // The 21 days of retries run against one failing endpoint: it is not disabled meanwhile (a year).
  service = await startTestService({
    clock,
    background: false,
    callbacks: { random },
    env: { PAYWATCH_ENDPOINT_DISABLE_AFTER: '31536000' },
  })
})
after(async () => {
  await service?.close()
  await failing?.close()
})

test('a failing callback is retried on schedule 25 times, then dead at the 26th failure', async () => {
  const { accountId } = await service.newAccount()
  const db = service.database.db
  const tracking = await insertCompleted(db, accountId, { callback: `${failing.url}/cb` }, undefined, clock())
  const worker = service.callbacks.worker
  const row = () => db.selectFrom('deliveries').selectAll().where('tracking_id', '=', tracking.id).executeTakeFirstOrThrow()

  for (let attempt = 1; attempt <= 26; attempt++) {
    const before = await row()
    const due = new Date(before.next_attempt_at).getTime()
    if (attempt > 1) {
      clock.set(new Date(due - 1))
      assert.equal(await worker.runOnce(), 0, `attempt ${attempt} is not made before its time`)
      clock.set(new Date(due))
    }
    const randomBefore = draws[drawn % draws.length]!
    assert.equal(await worker.runOnce(), 1, `attempt ${attempt} is made when due`)
    assert.equal(failing.received.length, attempt)
    const after = await row()
    assert.equal(after.attempts, attempt)
    if (attempt <= 25) {
      const n = attempt - 1
      const expected = n ** 4 + 15 + Math.floor(randomBefore * 30) * (n + 1)
      assert.equal(after.state, 'due')
      assert.equal((new Date(after.next_attempt_at).getTime() - clock().getTime()) / 1000, expected, `delay after attempt ${attempt}`)
      if (n === 0) assert.ok(expected >= 15 && expected <= 44)
    } else {
      assert.equal(after.state, 'dead')
      assert.ok(after.finished_at)
    }
  }
  clock.advance(365 * 86400_000)
  assert.equal(await worker.runOnce(), 0, 'a dead delivery is not attempted again')
  const log = await db.selectFrom('delivery_attempts').selectAll().execute()
  assert.equal(log.length, 26)
  assert.ok(log.every((a) => a.outcome === 'failed' && a.status_code === 500))
  const metrics = await service.app.inject({ method: 'GET', url: '/metrics' })
  assert.match(metrics.body, /paywatch_callback_deliveries_dead_total 1/)
})

test('a lease left by a crashed worker expires, then another worker delivers; the stale worker cannot overwrite', async () => {
  const ok = await startReceiver(() => ({ status: 200 }))
  try {
    const { accountId } = await service.newAccount()
    const db = service.database.db
    const tracking = await insertCompleted(db, accountId, { callback: `${ok.url}/cb` }, undefined, clock())
    const leaseUntil = new Date(clock().getTime() + 40_000)
    const [crashed] = await claimDueDeliveries(db, { now: clock(), leaseUntil, limit: 10, claim: 'crashed-worker' })
    assert.equal(crashed?.trackingId, tracking.id)
    // It started the attempt (its request went out), then crashed.
    await markSending(db, 'crashed-worker', [crashed!.id], clock())

    const worker = service.callbacks.worker
    assert.equal(await worker.runOnce(), 0, 'leased to the crashed worker')
    clock.set(leaseUntil)
    assert.equal(await worker.runOnce(), 1)
    assert.equal(ok.received.length, 1)
    // The attempt the crash cut off is in the log (the receiver may have seen it), then the one made now.
    const log = await db.selectFrom('delivery_attempts').selectAll().where('delivery_id', '=', crashed!.id).orderBy('attempt').execute()
    assert.deepEqual(
      log.map((a) => [a.attempt, a.outcome, a.worker, a.status_code]),
      [
        [1, 'failed', 'crashed-worker', null],
        [2, 'delivered', worker.name, 200],
      ],
    )
    assert.equal(log[0]!.error, INTERRUPTED_ATTEMPT_ERROR)
    assert.equal(new Date(log[0]!.started_at).getTime(), leaseUntil.getTime() - 40_000, 'started when the crashed worker started it')
    assert.equal(log[0]!.duration_ms, 40_000, 'until its lease ran out')

    // The crashed worker comes back and reports a failure: the delivery stays delivered.
    await recordAttempts(
      db,
      [
        {
          delivery: crashed!,
          worker: 'crashed-worker',
          startedAt: clock(),
          durationMs: 5,
          outcome: 'failed',
          statusCode: 500,
          error: null,
          excerpt: null,
          forwardTo: null,
          next: { state: 'due', at: clock() },
        },
      ],
      clock(),
    )
    const delivery = await db.selectFrom('deliveries').selectAll().where('tracking_id', '=', tracking.id).executeTakeFirstOrThrow()
    assert.equal(delivery.state, 'delivered')
    assert.equal(delivery.attempts, 2)
  } finally {
    await ok.close()
  }
})

test('a claim taking over an expired lease logs the cut-off attempt (worker name without its claim id) and shows it in the summary', async () => {
  const { accountId } = await service.newAccount()
  const db = service.database.db
  await insertCompleted(db, accountId, { callback: `${failing.url}/cb` }, undefined, clock())
  const claimedAt = clock()
  const [first] = await claimDueDeliveries(db, {
    now: claimedAt,
    leaseUntil: new Date(claimedAt.getTime() + 40_000),
    limit: 10,
    claim: 'node-a:1',
  })
  await markSending(db, 'node-a:1', [first!.id], claimedAt)
  clock.advance(40_000)
  const [second] = await claimDueDeliveries(db, {
    now: clock(),
    leaseUntil: new Date(clock().getTime() + 40_000),
    limit: 10,
    claim: 'node-b:2',
  })
  assert.equal(second?.id, first?.id)
  assert.equal(second!.attempts, 1, 'the cut-off attempt counts')
  const summary = await db.selectFrom('deliveries').selectAll().where('id', '=', second!.id).executeTakeFirstOrThrow()
  assert.deepEqual(
    [new Date(summary.last_attempt_at!).getTime(), summary.last_status_code, summary.last_error, summary.claimed_by],
    [claimedAt.getTime(), null, INTERRUPTED_ATTEMPT_ERROR, 'node-b:2'],
  )
  const log = await db.selectFrom('delivery_attempts').selectAll().where('delivery_id', '=', second!.id).execute()
  assert.deepEqual(
    log.map((a) => [a.attempt, a.outcome, a.worker, a.duration_ms]),
    [[1, 'failed', 'node-a', 40_000]],
  )
  // Finished, so the next test sees nothing due.
  await recordAttempts(db, [deliveredOutcome(second!, clock(), { worker: 'node-b', durationMs: 5 })], clock())
})

test('a worker killed holding claimed deliveries spends no retry of those it never sent, one of each it was sending', async () => {
  const { accountId } = await service.newAccount()
  const db = service.database.db
  const trackings = []
  for (let k = 0; k < 5; k++) trackings.push(await insertCompleted(db, accountId, { callback: `${failing.url}/cb` }, undefined, clock()))
  const ids = new Set(trackings.map((t) => t.id))
  const ours = async () =>
    (await db.selectFrom('deliveries').selectAll().execute()).filter((d) => ids.has(d.tracking_id)).sort((a, b) => a.id.localeCompare(b.id))
  // A worker claims all five, starts the attempts of two (their requests go out), and is killed (kill -9).
  const claimedAt = clock()
  const claimed = await claimDueDeliveries(db, {
    now: claimedAt,
    leaseUntil: new Date(claimedAt.getTime() + 40_000),
    limit: 10,
    claim: 'killed:1',
  })
  const mine = claimed.filter((d) => ids.has(d.trackingId)).sort((a, b) => a.id.localeCompare(b.id))
  assert.equal(mine.length, 5)
  const sending = mine.slice(0, 2).map((d) => d.id)
  await markSending(db, 'killed:1', sending, clock())
  // Its lease runs out: the next worker claims them.
  clock.advance(40_000)
  const again = await claimDueDeliveries(db, { now: clock(), leaseUntil: new Date(clock().getTime() + 40_000), limit: 10, claim: 'next:2' })
  assert.deepEqual(
    again
      .filter((d) => ids.has(d.trackingId))
      .map((d) => [d.id, d.attempts])
      .sort(),
    mine.map((d) => [d.id, sending.includes(d.id) ? 1 : 0]).sort(),
  )
  const rows = await ours()
  assert.deepEqual(
    rows.map((d) => [d.attempts, d.last_error]),
    mine.map((d) => (sending.includes(d.id) ? [1, INTERRUPTED_ATTEMPT_ERROR] : [0, null])),
    'never sent: no attempt, no retry spent; sent: one interrupted attempt',
  )
  const log = await db
    .selectFrom('delivery_attempts')
    .selectAll()
    .where(
      'delivery_id',
      'in',
      mine.map((d) => d.id),
    )
    .execute()
  assert.deepEqual(log.map((a) => a.delivery_id).sort(), [...sending].sort(), 'only the attempts that started are logged')
  // Finished, so the next test sees nothing due.
  await recordAttempts(
    db,
    again.map((delivery) => ({
      delivery,
      worker: 'next',
      startedAt: clock(),
      durationMs: 5,
      outcome: 'delivered' as const,
      statusCode: 200,
      error: null,
      excerpt: null,
      forwardTo: null,
      next: { state: 'delivered' as const },
    })),
    clock(),
  )
})

test("an attempt's start is on record before its request reaches the receiver, and cleared with its outcome", async () => {
  const slow = await startReceiver(() => ({ status: 200, delayMs: 300 }))
  try {
    const { accountId } = await service.newAccount()
    const db = service.database.db
    const tracking = await insertCompleted(db, accountId, { callback: `${slow.url}/cb` }, undefined, clock())
    const row = () => db.selectFrom('deliveries').selectAll().where('tracking_id', '=', tracking.id).executeTakeFirstOrThrow()
    const attempt = service.callbacks.worker.runOnce()
    await slow.waitFor(1)
    assert.notEqual((await row()).sending_at, null, 'the receiver has the request: its start is written')
    assert.equal(await attempt, 1)
    assert.deepEqual([(await row()).state, (await row()).sending_at], ['delivered', null])
  } finally {
    await slow.close()
  }
})

test('the oldest due age counts from when an attempt fell due, also while a worker holds or postponed the delivery', async () => {
  const { accountId } = await service.newAccount()
  const db = service.database.db
  const dueAt = clock()
  await insertCompleted(db, accountId, { callback: `${failing.url}/cb` }, undefined, dueAt)
  clock.advance(5_000)
  const claim = 'worker-of-a-slow-host'
  const [claimed] = await claimDueDeliveries(db, { now: clock(), leaseUntil: new Date(clock().getTime() + 60_000), limit: 10, claim })
  assert.ok(claimed, 'claimed: its next_attempt_at is now the lease end')
  clock.advance(5_000)
  assert.deepEqual(await deliveryQueueStats(db, clock()), { due: 1, oldestOverdue: dueAt })
  const metrics = await service.app.inject({ method: 'GET', url: '/metrics' })
  assert.match(metrics.body, /\npaywatch_callback_oldest_due_age_seconds 10\n/)

  await postponeDeliveries(db, [{ id: claimed.id, claim }], new Date(clock().getTime() + 30_000))
  assert.deepEqual(
    await deliveryQueueStats(db, clock()),
    { due: 1, oldestOverdue: dueAt },
    'postponed behind its host: still waiting since then',
  )

  // After a failed attempt the retry's due time counts: nothing is overdue until it comes.
  clock.advance(30_000)
  const [again] = await claimDueDeliveries(db, { now: clock(), leaseUntil: new Date(clock().getTime() + 60_000), limit: 10, claim })
  assert.equal(again?.id, claimed.id)
  const retryAt = new Date(clock().getTime() + 20_000)
  await recordAttempts(
    db,
    [
      {
        delivery: again!,
        worker: claim,
        startedAt: clock(),
        durationMs: 5,
        outcome: 'failed',
        statusCode: 500,
        error: null,
        excerpt: null,
        forwardTo: null,
        next: { state: 'due', at: retryAt },
      },
    ],
    clock(),
  )
  assert.deepEqual(await deliveryQueueStats(db, clock()), { due: 1, oldestOverdue: null })
  clock.set(new Date(retryAt.getTime() + 3_000))
  assert.deepEqual(await deliveryQueueStats(db, clock()), { due: 1, oldestOverdue: retryAt })
})
