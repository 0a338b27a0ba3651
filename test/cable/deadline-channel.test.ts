// The widget channel's second identifier (docs/api.md, "Release notifications"): DePay widget 13 names its
// payment by blockchain, sender, receiver and deadline. Trackings are stored directly (with the `deadline`
// column set) and their events emitted by hand; test/cable/widget-payments.test.ts runs the same on Anvil.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { getAddress } from 'viem'
import type { Ticker } from '../../src/cable/route.ts'
import type { Tracking } from '../../src/domain/tracking.ts'
import { completeTracking } from '../../src/store/complete-tracking.ts'
import { releaseTracking } from '../../src/store/release-tracking.ts'
import { connectCable, paymentIdentifier, type TestCableClient } from '../support/cable-client.ts'
import { manualClock } from '../support/clock.ts'
import { replayWidgetSocket, widget12Identifier, widget13Identifier, widget13KeepAlive } from '../support/depay-widgets.ts'
import { startTestService, type TestService } from '../support/service.ts'
import { insertDeadlineTracking, insertTestTracking, randomAddress } from '../support/trackings.ts'

const clock = manualClock(new Date('2026-01-01T00:00:00.000Z'))
const ticker: Ticker = () => () => {}

let service: TestService
let baseUrl: string
let accountId: string
const clients: TestCableClient[] = []
before(async () => {
  service = await startTestService({ background: false, clock, cable: { ticker } })
  baseUrl = await service.listen()
  ;({ accountId } = await service.newAccount())
})
after(async () => {
  await Promise.all(clients.map((c) => c.close()))
  await service?.close()
})

async function connect(): Promise<TestCableClient> {
  const client = await connectCable(baseUrl)
  clients.push(client)
  assert.deepEqual(await client.next(), { type: 'welcome' })
  return client
}

/** What widget 13 names: its route's from and to addresses (checksummed, as the route holds them) and the deadline. */
const identifierOf = (t: { blockchain: string; sender: string | null; receiver: string }, deadline: number | string): string =>
  JSON.stringify({
    blockchain: t.blockchain,
    sender: getAddress(t.sender!),
    receiver: getAddress(t.receiver),
    deadline,
    channel: 'PaymentChannel',
  })

async function subscribed(client: TestCableClient, identifier: string): Promise<string> {
  client.send({ command: 'subscribe', identifier })
  assert.deepEqual(await client.next(), { identifier, type: 'confirm_subscription' })
  return identifier
}

async function complete(
  t: Tracking,
  completion: Parameters<typeof completeTracking>[2] = { status: 'success', transaction: t.transaction! },
) {
  const done = await completeTracking(service.database.db, t.id, completion, clock())
  assert.ok(done)
  service.events.emit('completed', done)
  return done
}

async function release(t: Tracking) {
  const released = await releaseTracking(service.database.db, t.id, clock())
  assert.ok(released)
  service.events.emit('released', released.tracking)
}

/** A tracking stored with a sender and a nonce (typed so where they may be null). */
const known = (t: Tracking) => t as Tracking & { sender: string; nonce: bigint }

const deadline = 1_767_227_400_000 // widget 13: Math.ceil(new Date()) + 1800 * 1000, milliseconds
const success = { status: 'success', release: false, forward_to: 'https://shop.example/thanks', failed_reason: null }

test('the widget 13 identifier: deadline as a number or a string of digits, addresses in any case', async () => {
  const client = await connect()
  const t = await insertDeadlineTracking(service.database.db, accountId, deadline)
  await complete(t)
  const asNumber = await subscribed(client, identifierOf(t, deadline))
  assert.deepEqual(await client.next(), { identifier: asNumber, message: success })
  const lowerCase = JSON.stringify({ ...JSON.parse(asNumber), sender: t.sender, receiver: t.receiver.toUpperCase().replace('0X', '0x') })
  const asString = await subscribed(client, JSON.stringify({ ...JSON.parse(lowerCase), deadline: String(deadline) }))
  assert.deepEqual(await client.next(), { identifier: asString, message: success })

  const malformed = [
    { sender: t.sender, deadline },
    { sender: t.sender, receiver: t.receiver },
    { sender: t.sender, receiver: 'merchant', deadline },
    { sender: t.sender, receiver: t.receiver, deadline: -1 },
    { sender: t.sender, receiver: t.receiver, deadline: 1.5 },
    { sender: t.sender, receiver: t.receiver, deadline: '1e12' },
    { sender: t.sender, receiver: t.receiver, deadline: (2n ** 64n).toString() },
    { sender: t.sender, receiver: t.receiver, deadline: null },
    { receiver: t.receiver, deadline },
  ].map((fields) => JSON.stringify({ channel: 'PaymentChannel', blockchain: 'ethereum', ...fields }))
  for (const bad of malformed) {
    client.send({ command: 'subscribe', identifier: bad })
    assert.deepEqual(await client.next(), { identifier: bad, type: 'reject_subscription' }, bad)
  }
})

test('subscribed before the tracking exists: confirmed, then follows it once created', async () => {
  const client = await connect()
  const sender = randomAddress()
  const receiver = randomAddress()
  const identifier = await subscribed(client, identifierOf({ blockchain: 'ethereum', sender, receiver }, String(deadline)))
  assert.deepEqual(client.pending(), [], 'nothing to tell yet')

  // The same sender and receiver with another deadline is another payment.
  const other = await insertDeadlineTracking(service.database.db, accountId, deadline + 1, { sender, receiver, nonce: 8n })
  const t = await insertDeadlineTracking(service.database.db, accountId, deadline, { sender, receiver })
  service.events.emit('progress', { tracking: other, required: 2, passed: 2 })
  service.events.emit('progress', { tracking: t, required: 2, passed: 1 })
  assert.deepEqual(await client.next(), { identifier, message: { confirmations: { required: 2, passed: 1 } } })
  await complete(t)
  assert.deepEqual(await client.next(), { identifier, message: success })
  await release(t)
  assert.deepEqual(await client.next(), { identifier, message: { ...success, release: true } })
  assert.equal((await client.closed).code, 1000, 'released, nothing else waits: closed with 1000')
})

test("of several accounts' trackings of one (sender, receiver, deadline) the first created is followed; nothing of the others arrives", async () => {
  const phisher = await service.newAccount('phisher')
  const sender = randomAddress()
  const receiver = randomAddress()
  const first = await insertDeadlineTracking(service.database.db, accountId, deadline, {
    sender,
    receiver,
    createdAt: new Date(Date.now() - 60_000),
  })
  const later = await insertDeadlineTracking(service.database.db, phisher.accountId, deadline, {
    sender,
    receiver,
    forwardTo: 'https://phish.example/login',
  })
  const client = await connect()
  const identifier = await subscribed(client, identifierOf(first, deadline))

  service.events.emit('progress', { tracking: later, required: 5, passed: 3 })
  await complete(later)
  await release(later)
  service.events.emit('progress', { tracking: first, required: 2, passed: 1 })
  assert.deepEqual(await client.next(), { identifier, message: { confirmations: { required: 2, passed: 1 } } })
  assert.deepEqual(client.pending(), [], "nothing of the later account's tracking")

  // A widget that subscribes now is shown the first tracking's state (pending: nothing), not the released later one.
  const late = await connect()
  const lateId = await subscribed(late, identifierOf(first, String(deadline)))
  await complete(first, { status: 'failed', failedReason: 'AMOUNT_MISMATCH' })
  assert.deepEqual(await late.next(), {
    identifier: lateId,
    message: { status: 'failed', release: false, forward_to: null, failed_reason: 'AMOUNT_MISMATCH' },
  })
})

test('a tracking with a nonce and a deadline reaches both kinds of identifier', async () => {
  const client = await connect()
  const t = await insertDeadlineTracking(service.database.db, accountId, deadline)
  const byNonce = await subscribed(client, paymentIdentifier(known(t)))
  const byDeadline = await subscribed(client, identifierOf(t, deadline))
  service.events.emit('progress', { tracking: t, required: 3, passed: 2 })
  const frames = [await client.next(), await client.next()]
  assert.deepEqual(
    frames.sort((a, b) => String(a.identifier).localeCompare(String(b.identifier))),
    [byNonce, byDeadline]
      .sort((a, b) => a.localeCompare(b))
      .map((identifier) => ({ identifier, message: { confirmations: { required: 3, passed: 2 } } })),
  )
})

test("widget 13's own keep-alive pings are ignored and never close the socket", async () => {
  const client = await connect()
  for (let i = 0; i < 5; i++) client.send(widget13KeepAlive(new Date(Date.UTC(2026, 0, 1, 0, 0, 3 * i))))
  client.send({ type: 'ping', message: 'not even a number' })
  client.send({ type: 'ping' })
  const t = await insertDeadlineTracking(service.database.db, accountId, deadline)
  const identifier = await subscribed(client, identifierOf(t, deadline))
  assert.deepEqual(client.pending(), [], 'no answer to the pings')
  assert.equal(client.socket.readyState, client.socket.OPEN)
  client.send(widget13KeepAlive(clock()))
  service.events.emit('progress', { tracking: t, required: 2, passed: 1 })
  assert.deepEqual(await client.next(), { identifier, message: { confirmations: { required: 2, passed: 1 } } })
})

test('a released subscription does not close the socket while another subscription on it still waits', async () => {
  const client = await connect()
  const a = await insertDeadlineTracking(service.database.db, accountId, deadline)
  const b = await insertTestTracking(service.database.db, accountId)
  const aId = await subscribed(client, identifierOf(a, deadline))
  const bId = await subscribed(client, paymentIdentifier(known(b)))
  await complete(a)
  await release(a)
  assert.deepEqual(await client.next(), { identifier: aId, message: success })
  assert.deepEqual(await client.next(), { identifier: aId, message: { ...success, release: true } })
  // Still open: b waits, and is told its news.
  service.events.emit('progress', { tracking: b, required: 2, passed: 1 })
  assert.deepEqual(await client.next(), { identifier: bId, message: { confirmations: { required: 2, passed: 1 } } })
  assert.equal(client.socket.readyState, client.socket.OPEN)
  // A failed payment released also ends the wait.
  await complete(b, { status: 'failed', failedReason: 'FAILED' })
  await release(b)
  assert.deepEqual(await client.next(), {
    identifier: bId,
    message: { status: 'failed', release: false, forward_to: null, failed_reason: 'FAILED' },
  })
  assert.deepEqual(await client.next(), {
    identifier: bId,
    message: { status: 'failed', release: true, forward_to: null, failed_reason: 'FAILED' },
  })
  assert.equal((await client.closed).code, 1000)
})

test('widget 12 closes without a code after the release: it sees 1000 and does not reconnect (no loop)', async () => {
  const t = await insertTestTracking(service.database.db, accountId)
  const widget = replayWidgetSocket(12, baseUrl, widget12Identifier(t.blockchain, getAddress(t.sender!), t.nonce!))
  await widget.until((frame) => frame.type === 'confirm_subscription')
  await complete(t)
  await release(t)
  await widget.stopped
  assert.deepEqual(widget.messages, [success, { ...success, release: true }])
  assert.deepEqual(widget.closeCodes, [1000])
  assert.equal(widget.sockets, 1)

  // A page opened after the release is told it at once, and stops the same way.
  const again = replayWidgetSocket(12, baseUrl, widget12Identifier(t.blockchain, t.sender!, t.nonce!))
  await again.stopped
  assert.deepEqual(again.messages, [{ ...success, release: true }])
  assert.deepEqual(again.closeCodes, [1000])
  assert.equal(again.sockets, 1)
})

test('widget 13 subscribing after its release is told once and the socket ends with 1000', async () => {
  const t = await insertDeadlineTracking(service.database.db, accountId, deadline)
  await complete(t)
  await release(t)
  const widget = replayWidgetSocket(
    13,
    baseUrl,
    widget13Identifier({ blockchain: 'ethereum', fromAddress: getAddress(t.sender!), toAddress: getAddress(t.receiver) }, deadline),
  )
  await widget.stopped
  assert.deepEqual(widget.messages, [{ ...success, release: true }])
  assert.deepEqual(widget.closeCodes, [1000])
  assert.equal(widget.sockets, 1)
})

test('the per-socket subscription limit counts widget 13 identifiers too', async () => {
  const client = await connect()
  const sender = randomAddress()
  const receiver = randomAddress()
  const identifiers = Array.from({ length: 21 }, (_, i) => identifierOf({ blockchain: 'ethereum', sender, receiver }, deadline + i))
  for (const identifier of identifiers) client.send({ command: 'subscribe', identifier })
  for (const identifier of identifiers.slice(0, 20)) assert.deepEqual(await client.next(), { identifier, type: 'confirm_subscription' })
  assert.deepEqual(await client.next(), { identifier: identifiers[20], type: 'reject_subscription' })
})
