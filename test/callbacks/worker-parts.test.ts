// The parts of the delivery worker on their own: the wake signal, the deliveries in hand and the
// batched recording of outcomes (what a failed write must still do).
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import pino from 'pino'
import { createHeldDeliveries } from '../../src/callbacks/held-deliveries.ts'
import { createOutcomeRecorder } from '../../src/callbacks/outcome-recorder.ts'
import { createWakeSignal } from '../../src/common/wake-signal.ts'
import { createTrackingEvents } from '../../src/common/tracking-events.ts'
import type { AttemptOutcome } from '../../src/store/attempt-records.ts'
import { createTestDatabase } from '../support/database.ts'
import { deliveredOutcome } from './support.ts'
import { testTracking } from '../support/trackings.ts'

test('a wake while the loop is busy is kept: the next sleep returns at once, the one after waits', async () => {
  const signal = createWakeSignal()
  signal.wake()
  const started = performance.now()
  await signal.sleep(60_000)
  assert.ok(performance.now() - started < 1000)
  let slept = false
  const sleeping = signal.sleep(60_000).then(() => (slept = true))
  await new Promise((resolve) => setImmediate(resolve))
  assert.equal(slept, false)
  signal.wake()
  await sleeping
})

test('held deliveries settle once the last one is released', async () => {
  const held = createHeldDeliveries()
  await held.settled()
  held.add('a')
  held.add('b')
  let settled = false
  const waiting = held.settled().then(() => (settled = true))
  held.release(['a'])
  await new Promise((resolve) => setImmediate(resolve))
  assert.equal(settled, false)
  assert.deepEqual(held.ids(), ['b'])
  held.release(['b'])
  await waiting
  assert.equal(held.size, 0)
})

function outcome(id: string): AttemptOutcome {
  const tracking = testTracking('a', { id, secretId: id, status: 'success', callback: `https://host.example/${id}` })
  return deliveredOutcome({ id, trackingId: id, claim: 'c', attempts: 0, tracking }, new Date(0), { worker: 'w', durationMs: 1 })
}

test('outcomes added in one turn go into one write; a write that fails is logged and its deliveries leave the hand', async () => {
  const database = await createTestDatabase()
  after(() => database.close())
  // Outcomes of deliveries the database does not have: the log rows' reference fails the write.
  const statements: string[] = []
  const failingDb = database.db.withPlugin({
    transformQuery: (args) => {
      statements.push(args.node.kind)
      return args.node
    },
    transformResult: async (args) => args.result,
  })
  const logged: string[] = []
  const logger = pino({ level: 'error' }, { write: (line: string) => void logged.push(JSON.parse(line).msg) })
  const written: string[][] = []
  const recorder = createOutcomeRecorder({
    db: failingDb,
    clock: () => new Date(0),
    logger,
    events: createTrackingEvents(),
    onWritten: (batch) => void written.push(batch.map((o) => o.delivery.id)),
  })
  recorder.add(outcome('a'))
  recorder.add(outcome('b'))
  recorder.add(outcome('c'))
  await recorder.flushed()
  assert.equal(statements.filter((kind) => kind === 'RawNode').length, 1, 'one statement for the three')
  assert.deepEqual(written, [['a', 'b', 'c']])
  assert.deepEqual(logged, ['callback attempts could not be recorded; they will be retried'])
})

test('a write waits for the answers of requests still on their way, and no longer than its limit', async () => {
  const database = await createTestDatabase()
  after(() => database.close())
  let statements = 0
  const db = database.db.withPlugin({
    transformQuery: (args) => {
      // The statement itself (its parts, built by the query builder, pass here too).
      if (args.node.kind === 'RawNode') statements++
      return args.node
    },
    transformResult: async (args) => args.result,
  })
  const turns = async (n: number) => {
    for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve))
  }
  const written: string[][] = []
  const recorderWaiting = (unanswered: () => number, answersWaitMs: number) =>
    createOutcomeRecorder({
      db,
      clock: () => new Date(0),
      logger: pino({ level: 'silent' }),
      events: createTrackingEvents(),
      onWritten: (batch) => void written.push(batch.map((o) => o.delivery.id)),
      unanswered,
      answersWaitMs,
    })
  let unanswered = 2
  const recorder = recorderWaiting(() => unanswered, 600_000)
  recorder.add(outcome('a'))
  await turns(5)
  assert.equal(written.length, 0, 'two requests still out: no write yet')
  unanswered = 1
  recorder.add(outcome('b'))
  await turns(5)
  assert.equal(written.length, 0)
  unanswered = 0
  recorder.add(outcome('c'))
  await recorder.flushed()
  assert.deepEqual(written, [['a', 'b', 'c']], 'the last answer in: one write for the three')
  assert.equal(statements, 1)

  // A request that never answers (a slow endpoint) holds a write back no longer than the limit.
  const limited = recorderWaiting(() => 1, 1)
  limited.add(outcome('d'))
  await limited.flushed()
  assert.deepEqual(written.at(-1), ['d'])
})
