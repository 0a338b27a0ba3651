import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import pino from 'pino'
import { createCallbackMetrics } from '../../src/callbacks/metrics.ts'
import { createCallbackSender } from '../../src/callbacks/sender.ts'
import { createCallbackSigner } from '../../src/callbacks/signer.ts'
import { createDeliveryWorker } from '../../src/callbacks/worker.ts'
import { createMetrics } from '../../src/common/metrics.ts'
import { systemClock } from '../../src/common/clock.ts'
import { createTrackingEvents } from '../../src/common/tracking-events.ts'
import { createAccount } from '../../src/store/accounts.ts'
import { completeTrackings } from '../../src/store/complete-tracking.ts'
import { openDatabase, type DatabaseHandle } from '../../src/store/infrastructure/database.ts'
import { INTERRUPTED_ATTEMPT_ERROR, claimDueDeliveries, handedOffDelivery, markSending } from '../../src/store/deliveries.ts'
import type { DeliveryLease } from '../../src/store/delivery-rows.ts'
import { createFreshDatabaseUrl, createTestDatabase, dropDatabase, testDatabaseUrl } from '../support/database.ts'
import { seedEmbeddedDataDir } from '../support/pglite-template.ts'
import { startTestService } from '../support/service.ts'
import { eventually, insertCompleted, insertPending, startReceiver, verifiedBy } from './support.ts'

const cleanups: (() => Promise<void>)[] = []
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

test('two workers (two nodes on PostgreSQL) share the queue: every delivery attempted exactly once', async () => {
  const first = await createTestDatabase()
  cleanups.push(() => first.close())
  // On PostgreSQL the second worker has its own connection pool, as another node would.
  const second: DatabaseHandle = first.url ? await openDatabase({ databaseUrl: first.url, dataDir: 'memory://' }) : first
  if (second !== first) cleanups.unshift(() => second.close())

  const receiver = await startReceiver(() => ({ status: 200 }))
  cleanups.push(() => receiver.close())
  const account = await createAccount(first.db, 'two workers')
  const count = 120
  for (let i = 0; i < count; i++) await insertCompleted(first.db, account.id, { callback: `${receiver.url}/cb/${i}` })

  const signer = await createCallbackSigner(first.db, null)
  const workers = [first, second].map((handle, i) => {
    const sender = createCallbackSender({ timeoutMs: 5000, allowPrivate: true })
    cleanups.push(async () => sender.close())
    return createDeliveryWorker({
      db: handle.db,
      clock: systemClock,
      logger: pino({ level: 'silent' }),
      signer,
      sender,
      events: createTrackingEvents(),
      metrics: createCallbackMetrics(createMetrics().registry, handle.db, systemClock),
      timeoutMs: 5000,
      concurrency: 8,
      pollMs: 10,
      name: `node-${i}`,
    })
  })
  for (const worker of workers) worker.start()
  await receiver.waitFor(count, 30_000)
  for (const worker of workers) await worker.stop()

  const ids = receiver.received.map((r) => String(r.headers['x-delivery-id']))
  assert.equal(ids.length, count)
  assert.equal(new Set(ids).size, count, 'no delivery was sent twice')
  const attempts = await first.db.selectFrom('delivery_attempts').select(['delivery_id', 'worker']).execute()
  assert.equal(attempts.length, count)
  assert.equal(new Set(attempts.map((a) => a.delivery_id)).size, count)
  if (second !== first) {
    const byWorker = new Set(attempts.map((a) => a.worker))
    assert.equal(byWorker.size, 2, 'both nodes delivered')
  }
  const states = await first.db.selectFrom('deliveries').select('state').execute()
  assert.ok(states.every((s) => s.state === 'delivered'))
  const released = await first.db.selectFrom('trackings').select('release').execute()
  assert.ok(released.every((t) => t.release === true))
})

test('a completion written before a crash is delivered after the restart, signed with the persisted key', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'paywatch-restart-'))
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }))
  const databaseUrl = await createFreshDatabaseUrl()
  if (databaseUrl) cleanups.push(() => dropDatabase(databaseUrl))
  else await seedEmbeddedDataDir(dataDir)
  const env = { PAYWATCH_DATA_DIR: dataDir, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }
  const receiver = await startReceiver(() => ({ status: 200 }))
  cleanups.push(() => receiver.close())

  // First run: the status change and its delivery row are written, then the process stops before any worker ran.
  const before = await startTestService({ env, background: false })
  const { accountId } = await before.newAccount()
  const tracking = await insertCompleted(before.database.db, accountId, { callback: `${receiver.url}/cb` })
  const keyBefore = before.callbacks.signer.servicePublicKeyPem
  await before.close()
  assert.equal(receiver.received.length, 0)

  const restarted = await startTestService({ env, callbacks: { pollMs: 25 } })
  cleanups.push(() => restarted.close())
  const [got] = await receiver.waitFor(1)
  assert.equal(JSON.parse(got!.body).secret_id, tracking.secretId)
  assert.equal(restarted.callbacks.signer.servicePublicKeyPem, keyBefore, 'the generated key was persisted')
  assert.equal(await verifiedBy(got!, keyBefore), true)
})

test('embedded database: a delivery a stopped run held mid-attempt is made at the next start, and the cut-off attempt is logged', {
  skip: testDatabaseUrl ? 'the embedded database only (on PostgreSQL the lease runs out: test/callbacks/schedule.test.ts)' : false,
}, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'paywatch-held-'))
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }))
  await seedEmbeddedDataDir(dataDir)
  const env = { PAYWATCH_DATA_DIR: dataDir }
  const receiver = await startReceiver(() => ({ status: 200 }))
  cleanups.push(() => receiver.close())

  const before = await startTestService({ env, background: false })
  const { accountId } = await before.newAccount()
  const tracking = await insertCompleted(before.database.db, accountId, { callback: `${receiver.url}/cb` })
  // The run claims the delivery (an hour's lease), then stops before any outcome is recorded.
  const now = new Date()
  const [held] = await claimDueDeliveries(before.database.db, {
    now,
    leaseUntil: new Date(now.getTime() + 3_600_000),
    limit: 10,
    claim: 'previous-run:0',
  })
  assert.equal(held?.trackingId, tracking.id)
  // Its request went out (the attempt started) before the run stopped.
  await markSending(before.database.db, 'previous-run:0', [held!.id], now)
  await before.close()

  const restarted = await startTestService({ env, callbacks: { pollMs: 25 } })
  cleanups.push(() => restarted.close())
  await receiver.waitFor(1)
  const log = await eventually(async () => {
    const rows = await restarted.database.db
      .selectFrom('delivery_attempts')
      .selectAll()
      .where('delivery_id', '=', held!.id)
      .orderBy('attempt')
      .execute()
    return rows.length === 2 && rows
  })
  assert.deepEqual(
    log.map((a) => [a.attempt, a.outcome, a.worker]),
    [
      [1, 'failed', 'previous-run'],
      [2, 'delivered', restarted.callbacks.worker.name],
    ],
  )
  assert.equal(log[0]!.error, INTERRUPTED_ATTEMPT_ERROR)
})

/** markSending's statement: an attempt's start written right before its request (not the one taking it back). */
const isStartMark = (sql: string) => /^update "deliveries" set "sending_at" = \$1 where .*"state" = /.test(sql)

/**
 * Pending trackings (`trackings`, default one) whose callbacks go to one live receiver (answering as
 * `answer`), and a delivery worker on the same database (named `name`, on `clock`, at most `perHost`
 * requests at once to the receiver, with no poll within a test): the hand-off tests' common ground.
 * `statements`: every statement run on the database.
 */
async function handOffFixture(
  name: string,
  options: { trackings?: number; perHost?: number; answer?: Parameters<typeof startReceiver>[0] } = {},
) {
  const statements: string[] = []
  const database = await createTestDatabase({ onQuery: (sql) => statements.push(sql) })
  cleanups.push(() => database.close())
  const receiver = await startReceiver(options.answer)
  cleanups.push(() => receiver.close())
  const sender = createCallbackSender({ timeoutMs: 5000, allowPrivate: true })
  cleanups.push(async () => sender.close())
  const account = await createAccount(database.db, name)
  const trackings: Awaited<ReturnType<typeof insertPending>>[] = []
  for (let k = 0; k < (options.trackings ?? 1); k++)
    trackings.push(await insertPending(database.db, account.id, { callback: `${receiver.url}/${name}/${k}` }))
  const signer = await createCallbackSigner(database.db, null)
  const workerOn = (clock: () => Date) =>
    createDeliveryWorker({
      db: database.db,
      clock,
      logger: pino({ level: 'silent' }),
      signer,
      sender,
      events: createTrackingEvents(),
      metrics: createCallbackMetrics(createMetrics().registry, database.db, clock),
      timeoutMs: 5000,
      pollMs: 3_600_000,
      perHost: options.perHost,
      name,
    })
  /** The trackings failed under `lease`: their delivery rows are that lease's. */
  const completeAll = async (now: Date, lease: DeliveryLease) => {
    const results = await completeTrackings(
      database.db,
      trackings.map((tracking) => ({
        id: tracking.id,
        completion: { status: 'failed' as const, failedReason: 'AMOUNT_MISMATCH' as const },
      })),
      now,
      { lease },
    )
    return results.map((done) => {
      assert.ok(done?.deliveryId)
      return { ...done, deliveryId: done.deliveryId }
    })
  }
  const complete = async (now: Date, lease: DeliveryLease) => (await completeAll(now, lease))[0]!
  /** As the verdicts' writer hands them over (src/engine/verdicts.ts). */
  const handedOff = (done: Awaited<ReturnType<typeof complete>>, lease: DeliveryLease) =>
    handedOffDelivery(done.deliveryId, done.tracking, lease)
  const delivered = async (deliveryId: string) => {
    await eventually(async () => {
      const row = await database.db.selectFrom('deliveries').select('state').where('id', '=', deliveryId).executeTakeFirst()
      return row?.state === 'delivered'
    })
    assert.ok(receiver.received.some((got) => got.headers['x-delivery-id'] === deliveryId))
  }
  const sendingAt = async (deliveryId: string) =>
    (await database.db.selectFrom('deliveries').select('sending_at').where('id', '=', deliveryId).executeTakeFirstOrThrow()).sending_at
  const attemptLog = (deliveryId: string) =>
    database.db.selectFrom('delivery_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('attempt').execute()
  return {
    database,
    tracking: trackings[0]!,
    receiver,
    statements,
    workerOn,
    complete,
    completeAll,
    handedOff,
    delivered,
    sendingAt,
    attemptLog,
  }
}

test("a verdict's delivery inserted under the worker's lease is attempted as it commits, without a claim, a wake or a statement between", async () => {
  const { database, workerOn, complete, handedOff, delivered, statements, attemptLog } = await handOffFixture('hand-off')
  // No poll comes within the test: only the hand-off can deliver.
  const worker = workerOn(systemClock)
  assert.equal(worker.handoff.lease(new Date()), undefined, 'a worker not started takes nothing')
  // Its first claim may run at any point: a row under the worker's lease is not due for any claim.
  worker.start()
  const now = new Date()
  const lease = worker.handoff.lease(now)
  assert.ok(lease)
  const done = await complete(now, lease)
  const row = await database.db.selectFrom('deliveries').selectAll().where('id', '=', done.deliveryId).executeTakeFirstOrThrow()
  // Its attempt starts as it commits: the start is written with the row.
  assert.deepEqual([row.claimed_by, row.sending_at?.getTime()], [lease.claim, now.getTime()])
  // Not due for a claim (its lease is the worker's): only the hand-off sends it.
  assert.equal((await claimDueDeliveries(database.db, { now, leaseUntil: now, limit: 10, claim: 'someone-else' })).length, 0)
  const before = statements.length
  worker.handoff.take([handedOff(done, lease)])
  await delivered(done.deliveryId)
  assert.equal(statements.slice(before).filter(isStartMark).length, 0, 'no start written again before the request')
  assert.deepEqual(
    (await attemptLog(done.deliveryId)).map((a) => [a.attempt, a.outcome]),
    [[1, 'delivered']],
  )
  await worker.stop()
  assert.equal(worker.handoff.lease(new Date()), undefined, 'a stopped worker takes nothing')
})

test('a handed-off delivery whose worker died before sending it is claimed by another worker once its lease ends, its cut-off attempt logged', async () => {
  const { database, workerOn, complete, delivered, attemptLog } = await handOffFixture('orphaned-hand-off')
  // The dead worker's lease: the row committed under it, and the worker was gone before it took it.
  const now = new Date()
  const lease = { claim: 'dead-worker:claim-1', until: new Date(now.getTime() + 60_000) }
  const done = await complete(now, lease)
  // While the lease lasts, no other worker's claim takes the row.
  const claimAt = (at: Date) => claimDueDeliveries(database.db, { now: at, leaseUntil: at, limit: 10, claim: 'another' })
  assert.equal((await claimAt(new Date(lease.until.getTime() - 1))).length, 0)
  // After it, another worker's first claim (at its start) takes it and sends it.
  const afterLease = new Date(lease.until.getTime() + 1_000)
  const worker = workerOn(() => afterLease)
  worker.start()
  await delivered(done.deliveryId)
  await worker.stop()
  // Its start was written with the verdict, as its request goes out at the commit: the receiver may have it.
  const log = await attemptLog(done.deliveryId)
  assert.deepEqual(
    log.map((a) => [a.attempt, a.outcome, a.error, a.started_at.getTime()]),
    [
      [1, 'failed', INTERRUPTED_ATTEMPT_ERROR, now.getTime()],
      [2, 'delivered', null, afterLease.getTime()],
    ],
  )
})

test("handed-off deliveries beyond their endpoint's limit have the start written with them taken back until they go", async () => {
  let release!: () => void
  const busy = new Promise<void>((resolve) => (release = resolve))
  // The endpoint answers its first request only when the test lets it: the second waits for its one slot.
  const fixture = await handOffFixture('hand-off-over-limit', {
    trackings: 2,
    perHost: 1,
    answer: (_got, n) => (n === 0 ? { until: busy } : {}),
  })
  const { workerOn, completeAll, handedOff, delivered, sendingAt, receiver, statements, attemptLog } = fixture
  const worker = workerOn(systemClock)
  try {
    worker.start()
    const now = new Date()
    const lease = worker.handoff.lease(now)
    assert.ok(lease)
    const done = await completeAll(now, lease)
    assert.deepEqual(await Promise.all(done.map((d) => sendingAt(d.deliveryId).then((at) => at?.getTime()))), [
      now.getTime(),
      now.getTime(),
    ])
    const before = statements.length
    worker.handoff.take(done.map((d) => handedOff(d, lease)))
    await receiver.waitFor(1, 10_000)
    const first = receiver.received[0]!.headers['x-delivery-id']
    const second = done.find((d) => d.deliveryId !== first)!.deliveryId
    assert.equal(statements.slice(before).filter(isStartMark).length, 0, 'the one that went had its start written with it')
    assert.equal((await sendingAt(first as string))?.getTime(), now.getTime())
    // Taken back as it is found waiting (once signed): while the first still holds the endpoint's one slot.
    await eventually(async () => (await sendingAt(second)) === null)
    assert.equal(receiver.received.length, 1, 'the one waiting for a slot has not started: a crash now spends nothing')
    release()
    await delivered(second)
    assert.equal(statements.slice(before).filter(isStartMark).length, 1, 'its start is written as it goes')
    for (const d of done)
      assert.deepEqual(
        (await attemptLog(d.deliveryId)).map((a) => a.outcome),
        ['delivered'],
      )
  } finally {
    // Also when an assertion failed: the held request and the worker would keep the receiver from closing.
    release()
    await worker.stop()
  }
})
