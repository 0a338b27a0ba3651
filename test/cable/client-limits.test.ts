// Limits per client address, so that one client cannot fill the node's socket cap: open sockets per address,
// a connection-rate bucket per address, subscriptions per socket; refusals are counted in a metric. The
// current-state reads of subscribes are batched and cached.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { completeTracking } from '../../src/store/complete-tracking.ts'
import { connectCable, refusedUpgrade as refusedUpgradeAt, type TestCableClient } from '../support/cable-client.ts'
import { manualClock } from '../support/clock.ts'
import { startTestService, type TestService } from '../support/service.ts'
import { insertTestTracking, randomAddress } from '../support/trackings.ts'

const clock = manualClock(new Date('2026-01-01T00:00:00.000Z'))
let service: TestService
let baseUrl: string
let accountId: string
before(async () => {
  service = await startTestService({
    background: false,
    clock,
    env: {
      PAYWATCH_CABLE_MAX_CONNECTIONS_PER_ADDRESS: '3',
      PAYWATCH_CABLE_CONNECT_BURST: '5',
      PAYWATCH_CABLE_CONNECTS_PER_SECOND: '1',
      PAYWATCH_CABLE_MAX_SUBSCRIPTIONS: '3',
    },
  })
  baseUrl = await service.listen()
  ;({ accountId } = await service.newAccount())
})
after(async () => {
  await service?.close()
})

/** The refused upgrade's answer, its problem body parsed. */
const refusedUpgrade = async () => {
  const refused = await refusedUpgradeAt(baseUrl)
  return { ...refused, body: JSON.parse(refused.body) as Record<string, unknown> }
}

/** Connects as soon as the server has seen earlier sockets of this address close. */
async function connectOnceFree(): Promise<TestCableClient> {
  const deadline = Date.now() + 5000
  for (;;) {
    try {
      const client = await connectCable(baseUrl)
      assert.deepEqual(await client.next(), { type: 'welcome' })
      return client
    } catch (error) {
      if (Date.now() > deadline) throw error
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
}

async function refusals(reason: string): Promise<number> {
  const metric = await service.common.metrics.registry.getSingleMetric('paywatch_cable_refusals_total')?.get()
  return metric?.values.find((v) => v.labels.reason === reason)?.value ?? 0
}

async function stateReads(): Promise<number> {
  const metric = await service.common.metrics.registry.getSingleMetric('paywatch_cable_state_reads_total')?.get()
  assert.ok(metric, 'the state reads are counted')
  return metric.values[0]?.value ?? 0
}

test('past the open sockets of one address the upgrade is a 429 problem; a closed socket frees its place', async () => {
  clock.advance(60_000)
  const open = [await connectOnceFree(), await connectOnceFree(), await connectOnceFree()]
  const refused = await refusedUpgrade()
  assert.equal(refused.status, 429)
  assert.match(String(refused.headers['content-type']), /^application\/problem\+json/)
  assert.equal(refused.body.code, 'RATE_LIMITED')
  assert.match(String(refused.body.detail), /3 open widget connections/)
  assert.equal(refused.headers['retry-after'], '5')
  assert.equal(refused.headers['ratelimit-limit'], '3')
  assert.equal(refused.headers['ratelimit-remaining'], '0')
  assert.equal(await refusals('address_connections'), 1)

  await open.shift()!.close()
  open.push(await connectOnceFree())
  await Promise.all(open.map((client) => client.close()))
})

test('connections of one address are limited by a bucket that refills with time', async () => {
  clock.advance(60_000)
  for (let i = 0; i < 5; i++) await (await connectOnceFree()).close()
  const refused = await refusedUpgrade()
  assert.equal(refused.status, 429)
  assert.equal(refused.body.code, 'RATE_LIMITED')
  assert.equal(refused.headers['retry-after'], '1')
  assert.equal(refused.headers['ratelimit-limit'], '5')
  assert.equal(await refusals('connection_rate'), 1)

  clock.advance(1000)
  await (await connectOnceFree()).close()
  assert.equal((await refusedUpgrade()).status, 429, 'one connection per second refilled')
})

test('a socket holds at most PAYWATCH_CABLE_MAX_SUBSCRIPTIONS subscriptions; the refusal is counted', async () => {
  clock.advance(60_000)
  const client = await connectOnceFree()
  const identifiers = Array.from({ length: 4 }, () =>
    client.subscribe({ channel: 'PaymentChannel', blockchain: 'ethereum', sender: randomAddress(), nonce: 1 }),
  )
  for (const identifier of identifiers.slice(0, 3)) assert.deepEqual(await client.next(), { identifier, type: 'confirm_subscription' })
  assert.deepEqual(await client.next(), { identifier: identifiers[3], type: 'reject_subscription' })
  assert.equal(await refusals('subscriptions'), 1)
  await client.close()
})

test('subscribes that come together share one read; a repeated subscribe is served from the cache', async () => {
  clock.advance(60_000)
  const client = await connectOnceFree()
  const payments = await Promise.all(
    [1, 2, 3].map(async () => {
      const t = await insertTestTracking(service.database.db, accountId)
      await completeTracking(service.database.db, t.id, { status: 'success', transaction: t.transaction! }, clock())
      return t
    }),
  )
  const before = await stateReads()
  // One TCP write: the three commands reach the server in the same turn.
  const tcp = (client.socket as unknown as { _socket: { cork(): void; uncork(): void } })._socket
  tcp.cork()
  const identifiers = payments.map((t) =>
    client.subscribe({ channel: 'PaymentChannel', blockchain: t.blockchain, sender: t.sender, nonce: 7 }),
  )
  tcp.uncork()
  for (const identifier of identifiers) {
    assert.deepEqual(await client.next((f) => f.identifier === identifier && f.message !== undefined), {
      identifier,
      message: { status: 'success', release: false, forward_to: 'https://shop.example/thanks', failed_reason: null },
    })
  }
  assert.equal(await stateReads(), before + 1, 'one read for three payments')

  for (let i = 0; i < 5; i++) {
    client.send({ command: 'unsubscribe', identifier: identifiers[0] })
    client.send({ command: 'subscribe', identifier: identifiers[0] })
    assert.equal((await client.next((f) => f.identifier === identifiers[0] && f.message !== undefined)).identifier, identifiers[0])
  }
  const other = await connectOnceFree()
  other.send({ command: 'subscribe', identifier: identifiers[1] })
  assert.equal((await other.next((f) => f.message !== undefined)).identifier, identifiers[1])
  assert.equal(await stateReads(), before + 1, 'later subscribes to the same payments read nothing')
  await Promise.all([client.close(), other.close()])
})
