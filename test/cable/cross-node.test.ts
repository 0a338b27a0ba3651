import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { sql } from 'kysely'
import type { Tracking } from '../../src/domain/tracking.ts'
import { completeTracking } from '../../src/store/complete-tracking.ts'
import { LISTENER_APPLICATION_NAME } from '../../src/store/infrastructure/pg-listener.ts'
import { connectWelcomed, subscribeConfirmed, type TestCableClient } from '../support/cable-client.ts'
import { testDatabaseUrl } from '../support/database.ts'
import { startTestService, type TestService } from '../support/service.ts'
import { insertDeadlineTracking, insertTestTracking, randomAddress } from '../support/trackings.ts'

// Two nodes share one PostgreSQL database; the embedded database is one process, so there is nothing to test there.
const skip = testDatabaseUrl ? false : 'cross-node delivery needs PostgreSQL: run with DATABASE_URL=postgres://… to include it'

let nodeA: TestService
let nodeB: TestService
let accountId: string
let apiKey: string
const clients: TestCableClient[] = []
before(async () => {
  if (skip) return
  nodeA = await startTestService()
  nodeB = await startTestService({ env: { DATABASE_URL: nodeA.config.databaseUrl! } })
  ;({ accountId, apiKey } = await nodeA.newAccount())
})
after(async () => {
  await Promise.all(clients.map((c) => c.close()))
  await nodeB?.close()
  await nodeA?.close()
})

const addresses = new Map<TestService, Promise<string>>()
async function connect(node: TestService): Promise<TestCableClient> {
  if (!addresses.has(node)) addresses.set(node, node.listen())
  const client = await connectWelcomed(await addresses.get(node)!)
  clients.push(client)
  return client
}

const subscribed = (client: TestCableClient, t: Tracking): Promise<string> =>
  subscribeConfirmed(client, t as Tracking & { sender: string; nonce: bigint })

const releaseThroughA = (t: Tracking) =>
  nodeA.api(apiKey, {
    method: 'POST',
    url: '/v2/payments/release',
    payload: { blockchain: t.blockchain, transaction: t.transaction, sender: t.sender, nonce: String(t.nonce), secret_id: t.secretId },
  })

test('events on node A reach a widget on node B, once each on both nodes', { skip }, async () => {
  const onA = await connect(nodeA)
  const onB = await connect(nodeB)
  const t = await insertTestTracking(nodeA.database.db, accountId)
  // A second payment both widgets still wait on: the release of the first does not close their sockets.
  const waiting = await insertTestTracking(nodeA.database.db, accountId)
  const idA = await subscribed(onA, t)
  const idB = await subscribed(onB, t)
  const markerA = await subscribed(onA, waiting)
  const markerB = await subscribed(onB, waiting)

  nodeA.events.emit('progress', { tracking: t, required: 2, passed: 1 })
  assert.deepEqual(await onB.next(), { identifier: idB, message: { confirmations: { required: 2, passed: 1 } } })

  const done = await completeTracking(nodeA.database.db, t.id, { status: 'success', transaction: t.transaction! }, new Date())
  nodeA.events.emit('completed', done!)
  const completed = { status: 'success', release: false, forward_to: 'https://shop.example/thanks', failed_reason: null }
  assert.deepEqual(await onB.next(), { identifier: idB, message: completed })

  const res = await releaseThroughA(t)
  assert.equal(res.statusCode, 200, res.body)
  const released = { ...completed, release: true }
  assert.deepEqual(await onB.next(), { identifier: idB, message: released })

  // Node A delivered its own events directly; had it also delivered its own NOTIFYs, the duplicates
  // would be queued before this marker, which reaches A through the same LISTEN connection after them.
  nodeB.events.emit('progress', { tracking: waiting, required: 7, passed: 7 })
  const marker = { confirmations: { required: 7, passed: 7 } }
  assert.deepEqual(await onB.next(), { identifier: markerB, message: marker })
  const seenOnA = [await onA.next(), await onA.next(), await onA.next(), await onA.next()]
  assert.deepEqual(seenOnA, [
    { identifier: idA, message: { confirmations: { required: 2, passed: 1 } } },
    { identifier: idA, message: completed },
    { identifier: idA, message: released },
    { identifier: markerA, message: marker },
  ])
})

test('a burst of events on node A reaches node B complete and in order', { skip }, async () => {
  const onB = await connect(nodeB)
  const t = await insertTestTracking(nodeA.database.db, accountId)
  const idB = await subscribed(onB, t)
  // Emitted in one turn: they share NOTIFY statements, which must keep every note and their order.
  for (let passed = 1; passed <= 40; passed++) nodeA.events.emit('progress', { tracking: t, required: 40, passed })
  for (let passed = 1; passed <= 40; passed++) {
    assert.deepEqual(await onB.next(), { identifier: idB, message: { confirmations: { required: 40, passed } } })
  }
})

test('a lost LISTEN connection is re-established and the widget is told the state again', { skip }, async () => {
  const onB = await connect(nodeB)
  const t = await insertTestTracking(nodeA.database.db, accountId, { forwardTo: 'https://shop.example/next' })
  await completeTracking(nodeA.database.db, t.id, { status: 'success', transaction: t.transaction! }, new Date())
  const id = await subscribed(onB, t)
  const completed = { status: 'success', release: false, forward_to: 'https://shop.example/next', failed_reason: null }
  assert.deepEqual(await onB.next(), { identifier: id, message: completed }, 'the current state on subscribe')

  const killed = await sql<{ pid: number }>`
    SELECT pg_terminate_backend(pid) AS pid FROM pg_stat_activity
    WHERE application_name = ${LISTENER_APPLICATION_NAME} AND datname = current_database()`.execute(nodeA.database.db)
  assert.equal(killed.rows.length, 2, 'both nodes listen')
  // Events of the gap are lost; after reconnecting, node B re-sends the state of every subscribed payment.
  assert.deepEqual(await onB.next(), { identifier: id, message: completed }, 'resent after the reconnect')

  assert.equal((await releaseThroughA(t)).statusCode, 200)
  assert.deepEqual(await onB.next(), { identifier: id, message: { ...completed, release: true } })
})

test("another account's later tracking of the same payment never reaches a widget on another node", { skip }, async () => {
  const phisher = await nodeA.newAccount('phisher')
  const sender = randomAddress()
  const first = await insertTestTracking(nodeA.database.db, accountId, { sender, createdAt: new Date(Date.now() - 60_000) })
  const later = await insertTestTracking(nodeA.database.db, phisher.accountId, {
    sender,
    createdAt: new Date(),
    forwardTo: 'https://phish.example/login',
    transaction: first.transaction,
  })
  const onA = await connect(nodeA)
  const id = await subscribed(onA, first)

  // Everything of the later tracking happens on node B and crosses to node A through NOTIFY.
  nodeB.events.emit('progress', { tracking: later, required: 5, passed: 3 })
  const done = await completeTracking(nodeB.database.db, later.id, { status: 'success', transaction: later.transaction! }, new Date())
  nodeB.events.emit('completed', done!)
  const released = await nodeB.api(phisher.apiKey, {
    method: 'POST',
    url: '/v2/payments/release',
    payload: {
      blockchain: later.blockchain,
      transaction: later.transaction,
      sender: later.sender,
      nonce: String(later.nonce),
      secret_id: later.secretId,
    },
  })
  assert.equal(released.statusCode, 200, released.body)

  // A marker of the first tracking through the same LISTEN connection, after the others.
  nodeB.events.emit('progress', { tracking: first, required: 2, passed: 1 })
  assert.deepEqual(await onA.next(), { identifier: id, message: { confirmations: { required: 2, passed: 1 } } })
  assert.deepEqual(
    onA.pending().filter((f) => f.type !== 'ping'),
    [],
    "nothing of the later account's tracking",
  )

  // A late widget on node A is not shown the later tracking's release either; then the first completes (202: held).
  const late = await connect(nodeA)
  const lateId = await subscribed(late, first)
  const ownDone = await completeTracking(nodeB.database.db, first.id, { status: 'success', transaction: first.transaction! }, new Date())
  nodeB.events.emit('completed', ownDone!)
  const held = { status: 'success', release: false, forward_to: 'https://shop.example/thanks', failed_reason: null }
  assert.deepEqual(await late.next(), { identifier: lateId, message: held })
  const latest = await connect(nodeA)
  const latestId = await subscribed(latest, first)
  assert.deepEqual(await latest.next(), { identifier: latestId, message: held })
})

test('a widget 13 subscription on node B, made before its tracking exists, follows it through node A', { skip }, async () => {
  const onB = await connect(nodeB)
  const sender = randomAddress()
  const receiver = randomAddress()
  const deadline = 1_767_227_400
  const identifier = JSON.stringify({
    blockchain: 'ethereum',
    sender,
    receiver: receiver.toUpperCase().replace('0X', '0x'),
    deadline,
    channel: 'PaymentChannel',
  })
  onB.send({ command: 'subscribe', identifier })
  assert.deepEqual(await onB.next(), { identifier, type: 'confirm_subscription' })

  const t = await insertDeadlineTracking(nodeA.database.db, accountId, deadline, { sender, receiver })
  nodeA.events.emit('progress', { tracking: t, required: 2, passed: 1 })
  assert.deepEqual(await onB.next(), { identifier, message: { confirmations: { required: 2, passed: 1 } } })
  const done = await completeTracking(nodeA.database.db, t.id, { status: 'success', transaction: t.transaction! }, new Date())
  nodeA.events.emit('completed', done!)
  const completed = { status: 'success', release: false, forward_to: 'https://shop.example/thanks', failed_reason: null }
  assert.deepEqual(await onB.next(), { identifier, message: completed })
  assert.equal((await releaseThroughA(t)).statusCode, 200)
  assert.deepEqual(await onB.next(), { identifier, message: { ...completed, release: true } })
  assert.equal((await onB.closed).code, 1000, 'released on node A, closed on node B')
})
