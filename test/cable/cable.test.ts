import assert from 'node:assert/strict'
import { connect as connectTcp } from 'node:net'
import { after, before, test } from 'node:test'
import { getAddress } from 'viem'
import type { Ticker } from '../../src/cable/route.ts'
import type { Tracking } from '../../src/domain/tracking.ts'
import { completeTracking } from '../../src/store/complete-tracking.ts'
import { releaseTracking } from '../../src/store/release-tracking.ts'
import { connectCable, type CableFrame, type TestCableClient } from '../support/cable-client.ts'
import { manualClock } from '../support/clock.ts'
import { startTestService, type TestService } from '../support/service.ts'
import { insertTestTracking, randomAddress } from '../support/trackings.ts'

const clock = manualClock(new Date('2026-01-01T00:00:00.000Z'))
let tick: () => void = () => {}
let tickInterval = 0
const ticker: Ticker = (fn, intervalMs) => {
  tick = fn
  tickInterval = intervalMs
  return () => void (tick = () => {})
}

let service: TestService
let baseUrl: string
let accountId: string
let apiKey: string
const clients: TestCableClient[] = []
before(async () => {
  service = await startTestService({ background: false, clock, cable: { ticker } })
  baseUrl = await service.listen()
  ;({ accountId, apiKey } = await service.newAccount())
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

const identifierOf = (t: Tracking, changes: Record<string, unknown> = {}) => ({
  channel: 'PaymentChannel',
  blockchain: t.blockchain,
  sender: t.sender,
  nonce: Number(t.nonce),
  ...changes,
})

async function subscribed(client: TestCableClient, t: Tracking, changes: Record<string, unknown> = {}): Promise<string> {
  const identifier = client.subscribe(identifierOf(t, changes))
  assert.deepEqual(await client.next(), { identifier, type: 'confirm_subscription' })
  return identifier
}

async function complete(t: Tracking, completion: Parameters<typeof completeTracking>[2]): Promise<Tracking> {
  const done = await completeTracking(service.database.db, t.id, completion, clock())
  assert.ok(done)
  service.events.emit('completed', done)
  return done
}

test('connect: welcome, the ActionCable subprotocol, pings every 3 s with the server time in seconds', async () => {
  const client = await connect()
  assert.equal(client.socket.protocol, 'actioncable-v1-json')
  assert.equal(tickInterval, 3000)
  clock.advance(12_345)
  tick()
  assert.deepEqual(await client.next((f) => f.type === 'ping'), { type: 'ping', message: 1767225612 })
})

test('plain GET /cable is 426 problem+json', async () => {
  const res = await service.app.inject({ method: 'GET', url: '/cable' })
  assert.equal(res.statusCode, 426)
  assert.equal(res.json().code, 'UPGRADE_REQUIRED')
  assert.equal(res.json().title, 'Upgrade Required')
})

/** One request on a raw socket (what `ws` refuses never reaches inject()); the answer split up. */
async function rawRequest(headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const { port, hostname } = new URL(baseUrl)
  const socket = connectTcp(Number(port), hostname)
  socket.write(
    `GET /cable HTTP/1.1\r\nhost: ${hostname}\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`,
  )
  const chunks: Buffer[] = []
  for await (const chunk of socket) chunks.push(chunk as Buffer)
  const [head = '', body = ''] = Buffer.concat(chunks).toString('utf8').split('\r\n\r\n')
  const [statusLine = '', ...lines] = head.split('\r\n')
  return {
    status: Number(statusLine.split(' ')[1]),
    headers: Object.fromEntries(
      lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
    ),
    body,
  }
}

test('a WebSocket handshake ws refuses is a 400 problem+json, and the socket is closed', async () => {
  const upgrade = {
    connection: 'Upgrade',
    upgrade: 'websocket',
    'sec-websocket-version': '13',
    'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
  }
  const cases: [Record<string, string>, RegExp][] = [
    [{ ...upgrade, 'sec-websocket-key': '' }, /Sec-WebSocket-Key/],
    [{ ...upgrade, 'sec-websocket-key': 'short' }, /Sec-WebSocket-Key/],
    [{ ...upgrade, 'sec-websocket-version': '7' }, /Sec-WebSocket-Version/],
    [{ ...upgrade, upgrade: 'h2c' }, /Upgrade header/],
    [{ ...upgrade, 'sec-websocket-protocol': 'a, , b' }, /Sec-WebSocket-Protocol/],
  ]
  for (const [headers, detail] of cases) {
    const answer = await rawRequest(headers)
    assert.equal(answer.status, 400, JSON.stringify(headers))
    assert.match(answer.headers['content-type'] ?? '', /^application\/problem\+json/)
    const problem = JSON.parse(answer.body)
    assert.equal(problem.code, 'BAD_WEBSOCKET_HANDSHAKE')
    assert.equal(problem.status, 400)
    assert.equal(problem.title, 'Bad Request')
    assert.match(problem.detail, detail)
    if (headers['sec-websocket-version'] === '7') assert.equal(answer.headers['sec-websocket-version'], '13, 8')
  }
  // The service still takes well-formed handshakes.
  await connect()
})

test('subscribe: confirmed with the identifier verbatim; malformed identifiers are rejected', async () => {
  const client = await connect()
  const t = await insertTestTracking(service.database.db, accountId)
  // Checksummed sender and string nonce name the same payment.
  const identifier = await subscribed(client, t, { sender: getAddress(t.sender!), nonce: '7' })
  assert.equal(JSON.parse(identifier).nonce, '7')

  const malformed = [
    JSON.stringify({ channel: 'OtherChannel', blockchain: 'ethereum', sender: t.sender, nonce: 1 }),
    JSON.stringify({ channel: 'PaymentChannel', blockchain: 'ethereum', sender: 'alice', nonce: 1 }),
    JSON.stringify({ channel: 'PaymentChannel', blockchain: 'ethereum', sender: t.sender, nonce: -1 }),
    JSON.stringify({ channel: 'PaymentChannel', blockchain: 'ethereum', sender: t.sender }),
    JSON.stringify({ channel: 'PaymentChannel', blockchain: 'Ethereum Mainnet!', sender: t.sender, nonce: 1 }),
    '{not json',
    '[1,2]',
  ]
  for (const bad of malformed) {
    client.send({ command: 'subscribe', identifier: bad })
    assert.deepEqual(await client.next(), { identifier: bad, type: 'reject_subscription' })
  }
})

test('one connection holds at most 20 subscriptions', async () => {
  const client = await connect()
  const identifiers = Array.from({ length: 21 }, (_, nonce) =>
    client.subscribe({ channel: 'PaymentChannel', blockchain: 'ethereum', sender: randomAddress(), nonce }),
  )
  for (const identifier of identifiers.slice(0, 20)) assert.deepEqual(await client.next(), { identifier, type: 'confirm_subscription' })
  assert.deepEqual(await client.next(), { identifier: identifiers[20], type: 'reject_subscription' })
  client.send({ command: 'unsubscribe', identifier: identifiers[0] })
  const freed = client.subscribe(JSON.parse(identifiers[20]!))
  assert.deepEqual(await client.next(), { identifier: freed, type: 'confirm_subscription' }, 'an unsubscribe frees a place')
})

test('frames that are not commands are ignored and never close the connection or the server', async () => {
  const client = await connect()
  for (const frame of [
    'not json',
    '[]',
    'null',
    '42',
    '{"command":"subscribe"}',
    '{"command":"dance","identifier":"{}"}',
    '{"command":"subscribe","identifier":{"channel":"PaymentChannel"}}',
    '{"command":"message","identifier":"{}","data":"{}"}',
    '{"command":"unsubscribe","identifier":"never subscribed"}',
  ]) {
    client.send(frame)
  }
  client.socket.send(Buffer.from([0, 1, 2, 255]), { binary: true })
  const t = await insertTestTracking(service.database.db, accountId)
  await subscribed(client, t)
  assert.deepEqual(client.pending(), [], 'nothing answered the bad frames')

  const greedy = await connect()
  greedy.send('x'.repeat(64 * 1024))
  assert.equal((await greedy.closed).code, 1009, 'an oversized frame closes only that socket')
  const another = await connect()
  await subscribed(another, t)
})

test('confirmations while confirming, then the final state, then the release (202 flow)', async () => {
  const client = await connect()
  const t = await insertTestTracking(service.database.db, accountId)
  const identifier = await subscribed(client, t)

  service.events.emit('progress', { tracking: t, required: 2, passed: 1 })
  assert.deepEqual(await client.next(), { identifier, message: { confirmations: { required: 2, passed: 1 } } })
  service.events.emit('progress', { tracking: t, required: 2, passed: 2 })
  assert.deepEqual(await client.next(), { identifier, message: { confirmations: { required: 2, passed: 2 } } })

  await complete(t, { status: 'success', transaction: t.transaction! })
  assert.deepEqual(await client.next(), {
    identifier,
    message: { status: 'success', release: false, forward_to: 'https://shop.example/thanks', failed_reason: null },
  })

  const res = await service.api(apiKey, {
    method: 'POST',
    url: '/v2/payments/release',
    payload: { blockchain: t.blockchain, transaction: t.transaction, sender: t.sender, nonce: 7, secret_id: t.secretId },
  })
  assert.equal(res.statusCode, 200, res.body)
  assert.deepEqual(await client.next(), {
    identifier,
    message: { status: 'success', release: true, forward_to: 'https://shop.example/thanks', failed_reason: null },
  })
  // Released and nothing else waits on the socket: the server closes it with 1000 (no reconnect).
  assert.equal((await client.closed).code, 1000)
  assert.deepEqual(client.pending(), [])
})

test('an idempotent repeat of a release announces nothing new to a widget still waiting on another payment', async () => {
  const client = await connect()
  const t = await insertTestTracking(service.database.db, accountId)
  const waiting = await insertTestTracking(service.database.db, accountId)
  const identifier = await subscribed(client, t)
  const waitingId = await subscribed(client, waiting)
  await complete(t, { status: 'success', transaction: t.transaction! })
  assert.equal((await client.next()).identifier, identifier)
  const release = {
    method: 'POST' as const,
    url: '/v2/payments/release',
    payload: { blockchain: t.blockchain, transaction: t.transaction, sender: t.sender, nonce: 7, secret_id: t.secretId },
  }
  assert.equal((await service.api(apiKey, release)).statusCode, 200)
  assert.deepEqual((await client.next()).message, {
    status: 'success',
    release: true,
    forward_to: 'https://shop.example/thanks',
    failed_reason: null,
  })
  assert.equal((await service.api(apiKey, release)).statusCode, 200)
  service.events.emit('progress', { tracking: waiting, required: 9, passed: 9 })
  assert.deepEqual(await client.next(), { identifier: waitingId, message: { confirmations: { required: 9, passed: 9 } } })
  assert.deepEqual(client.pending(), [], 'no second release message')
})

test('a failed payment forwards the user only with forward_on_failure', async () => {
  const client = await connect()
  const stay = await insertTestTracking(service.database.db, accountId, { forwardOnFailure: false })
  const go = await insertTestTracking(service.database.db, accountId, { forwardOnFailure: true, forwardTo: 'https://shop.example/retry' })
  const stayId = await subscribed(client, stay)
  const goId = await subscribed(client, go)

  const failedStay = await complete(stay, { status: 'failed', failedReason: 'AMOUNT_MISMATCH' })
  assert.deepEqual(await client.next(), {
    identifier: stayId,
    message: { status: 'failed', release: false, forward_to: null, failed_reason: 'AMOUNT_MISMATCH' },
  })
  // Released by a 200 callback answer (the delivery worker's path).
  const released = await releaseTracking(service.database.db, failedStay.id, clock())
  service.events.emit('released', released!.tracking)
  assert.deepEqual((await client.next()).message, { status: 'failed', release: true, forward_to: null, failed_reason: 'AMOUNT_MISMATCH' })

  await complete(go, { status: 'failed', failedReason: 'TOKEN_MISMATCH' })
  assert.deepEqual(await client.next(), {
    identifier: goId,
    message: { status: 'failed', release: false, forward_to: 'https://shop.example/retry', failed_reason: 'TOKEN_MISMATCH' },
  })
})

test('a widget that subscribes after completion or release gets the current state at once', async () => {
  const client = await connect()
  const done = await insertTestTracking(service.database.db, accountId)
  await completeTracking(service.database.db, done.id, { status: 'success', transaction: done.transaction! }, clock())
  const doneId = await subscribed(client, done)
  assert.deepEqual(await client.next(), {
    identifier: doneId,
    message: { status: 'success', release: false, forward_to: 'https://shop.example/thanks', failed_reason: null },
  })

  // Another account's tracking of the same payment, released: the widget does not know accounts.
  const other = await service.newAccount('other shop')
  const elsewhere = await insertTestTracking(service.database.db, other.accountId, { forwardTo: null })
  await completeTracking(service.database.db, elsewhere.id, { status: 'success', transaction: elsewhere.transaction! }, clock())
  await releaseTracking(service.database.db, elsewhere.id, clock())
  const elsewhereId = await subscribed(client, elsewhere, { sender: elsewhere.sender!.toUpperCase().replace('0X', '0x') })
  assert.deepEqual(await client.next(), {
    identifier: elsewhereId,
    message: { status: 'success', release: true, forward_to: null, failed_reason: null },
  })

  // Still pending: confirmation only, nothing more.
  const pending = await insertTestTracking(service.database.db, accountId)
  await subscribed(client, pending)
  const marker = await insertTestTracking(service.database.db, accountId)
  const markerId = await subscribed(client, marker)
  service.events.emit('progress', { tracking: marker, required: 2, passed: 1 })
  assert.equal((await client.next()).identifier, markerId)
})

test('unsubscribe stops the messages of that payment only; a repeated subscribe is confirmed once more', async () => {
  const client = await connect()
  const a = await insertTestTracking(service.database.db, accountId)
  const b = await insertTestTracking(service.database.db, accountId)
  const aId = await subscribed(client, a)
  assert.equal(await subscribed(client, a), aId)
  const bId = await subscribed(client, b)
  client.send({ command: 'unsubscribe', identifier: aId })
  // Unsubscribe has no answer; a following command proves it was handled.
  const c = await insertTestTracking(service.database.db, accountId)
  await subscribed(client, c)
  service.events.emit('progress', { tracking: a, required: 3, passed: 1 })
  service.events.emit('progress', { tracking: b, required: 3, passed: 2 })
  const frame: CableFrame = await client.next()
  assert.deepEqual(frame, { identifier: bId, message: { confirmations: { required: 3, passed: 2 } } })
  assert.deepEqual(client.pending(), [], 'one message for the repeated subscription, none for the unsubscribed one')
})

test('shutdown tells connected widgets to reconnect (elsewhere) and closes them', async () => {
  const client = await connect()
  await service.close()
  assert.deepEqual(await client.next(), { type: 'disconnect', reason: 'server_restart', reconnect: true })
  await client.closed
})
