// The widget's identifier (blockchain, sender, nonce) is public: another account can track the same payment.
// The channel follows the tracking created first; nothing of a later one (progress, status, release,
// forward_to) reaches it, neither as an event nor as the state a late subscriber is shown.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { Tracking } from '../../src/domain/tracking.ts'
import { completeTracking } from '../../src/store/complete-tracking.ts'
import { connectWelcomed, subscribeConfirmed, type TestCableClient } from '../support/cable-client.ts'
import { startTestService, type TestService } from '../support/service.ts'
import { insertTestTracking, randomAddress } from '../support/trackings.ts'

let service: TestService
let baseUrl: string
let shop: { accountId: string; apiKey: string }
let phisher: { accountId: string; apiKey: string }
const clients: TestCableClient[] = []
before(async () => {
  service = await startTestService({ background: false })
  baseUrl = await service.listen()
  shop = await service.newAccount('shop')
  phisher = await service.newAccount('phisher')
})
after(async () => {
  await Promise.all(clients.map((c) => c.close()))
  await service?.close()
})

async function connect(): Promise<TestCableClient> {
  const client = await connectWelcomed(baseUrl)
  clients.push(client)
  return client
}

const subscribed = (client: TestCableClient, t: Tracking): Promise<string> =>
  subscribeConfirmed(client, t as Tracking & { sender: string; nonce: bigint })

const release = (apiKey: string, t: Tracking) =>
  service.api(apiKey, {
    method: 'POST',
    url: '/v2/payments/release',
    payload: { blockchain: t.blockchain, transaction: t.transaction, sender: t.sender, nonce: String(t.nonce), secret_id: t.secretId },
  })

async function complete(t: Tracking): Promise<Tracking> {
  const done = await completeTracking(service.database.db, t.id, { status: 'success', transaction: t.transaction! }, new Date())
  assert.ok(done)
  service.events.emit('completed', done)
  return done
}

/** Two accounts' trackings of one payment: the shop's created a minute before the phisher's. */
async function contestedPayment(): Promise<{ first: Tracking; later: Tracking }> {
  const sender = randomAddress()
  const now = Date.now()
  const first = await insertTestTracking(service.database.db, shop.accountId, {
    sender,
    createdAt: new Date(now - 60_000),
    forwardTo: 'https://shop.example/thanks',
  })
  const later = await insertTestTracking(service.database.db, phisher.accountId, {
    sender,
    createdAt: new Date(now),
    forwardTo: 'https://phish.example/login',
    transaction: first.transaction,
  })
  return { first, later }
}

test("a later account's progress, completion and release never reach the channel; the first tracking's hold stands", async () => {
  const { first, later } = await contestedPayment()
  const widget = await connect()
  const id = await subscribed(widget, first)

  service.events.emit('progress', { tracking: later, required: 5, passed: 3 })
  await complete(later)
  const released = await release(phisher.apiKey, later)
  assert.equal(released.statusCode, 200, released.body)
  assert.equal(released.json().release, true)

  // A marker of the first tracking: anything of the later one would have been queued before it.
  service.events.emit('progress', { tracking: first, required: 2, passed: 1 })
  assert.deepEqual(await widget.next(), { identifier: id, message: { confirmations: { required: 2, passed: 1 } } })
  assert.deepEqual(
    widget.pending().filter((f) => f.type !== 'ping'),
    [],
    "nothing of the later account's tracking",
  )

  // A widget that comes now is not shown the later tracking's released state: the first one is pending.
  const late = await connect()
  const lateId = await subscribed(late, first)
  service.events.emit('progress', { tracking: first, required: 2, passed: 2 })
  assert.deepEqual(await late.next(), { identifier: lateId, message: { confirmations: { required: 2, passed: 2 } } })
  assert.deepEqual(
    late.pending().filter((f) => f.type !== 'ping'),
    [],
  )

  // The first tracking completes: its callback answered 202, so the user waits for its own release.
  await complete(first)
  const held = { status: 'success', release: false, forward_to: 'https://shop.example/thanks', failed_reason: null }
  assert.deepEqual(
    (await widget.next((f) => f.identifier === id && f.message !== undefined && 'status' in (f.message as object))).message,
    held,
  )
  const latest = await connect()
  const latestId = await subscribed(latest, first)
  assert.deepEqual(await latest.next(), { identifier: latestId, message: held }, "the first tracking's hold, not the later release")

  const own = await release(shop.apiKey, first)
  assert.equal(own.statusCode, 200, own.body)
  assert.deepEqual(await latest.next(), { identifier: latestId, message: { ...held, release: true } })
})

test('a subscriber who came before any tracking existed follows the one created first', async () => {
  const sender = randomAddress()
  const widget = await connect()
  const id = widget.subscribe({ channel: 'PaymentChannel', blockchain: 'ethereum', sender, nonce: 7 })
  assert.deepEqual(await widget.next(), { identifier: id, type: 'confirm_subscription' })

  const first = await insertTestTracking(service.database.db, shop.accountId, { sender, createdAt: new Date(Date.now() - 1000) })
  const later = await insertTestTracking(service.database.db, phisher.accountId, {
    sender,
    createdAt: new Date(),
    forwardTo: 'https://phish.example/login',
  })
  service.events.emit('progress', { tracking: later, required: 3, passed: 1 })
  await complete(later)
  service.events.emit('progress', { tracking: first, required: 3, passed: 2 })
  assert.deepEqual(await widget.next(), { identifier: id, message: { confirmations: { required: 3, passed: 2 } } })
  assert.deepEqual(
    widget.pending().filter((f) => f.type !== 'ping'),
    [],
  )
})
