import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { manualClock } from '../support/clock.ts'
import { startTestService, type TestService } from '../support/service.ts'
import { insertCompleted, startReceiver, type Answer, type Receiver } from '../callbacks/support.ts'

const clock = manualClock(new Date('2026-05-01T08:00:00.000Z'))
let service: TestService
const receivers: Receiver[] = []
/** A receiver whose answer the test changes as it goes. */
async function receiver(first: Answer) {
  let answer = first
  const r = await startReceiver(() => answer)
  receivers.push(r)
  return Object.assign(r, { answer: (next: Answer) => void (answer = next) })
}

before(async () => {
  // Driven by hand (runOnce, injected clock); an endpoint failing for 100 s is disabled.
  service = await startTestService({ clock, background: false, env: { PAYWATCH_ENDPOINT_DISABLE_AFTER: '100' } })
})
after(async () => {
  await service?.close()
  for (const r of receivers) await r.close()
})

const db = () => service.database.db
const deliveryOf = (trackingId: string) =>
  db().selectFrom('deliveries').selectAll().where('tracking_id', '=', trackingId).orderBy('created_at').execute()
const endpoints = async (apiKey: string) => (await service.api(apiKey, { method: 'GET', url: '/v2/endpoints' })).json()
const complete = (accountId: string, callback: string) => insertCompleted(db(), accountId, { callback }, undefined, clock())

test('410 disables the endpoint at once; its deliveries wait without spending retries; enable delivers them', async () => {
  const { accountId, apiKey } = await service.newAccount()
  const r = await receiver({ status: 410 })
  const first = await complete(accountId, `${r.url}/a`)
  assert.equal(await service.callbacks.worker.runOnce(), 1)
  const [endpoint] = await endpoints(apiKey)
  assert.equal(endpoint.state, 'disabled')
  assert.equal(endpoint.disabled_reason, 'the endpoint answered 410 Gone')
  assert.equal(endpoint.failing_since, clock().toISOString())

  const second = await complete(accountId, `${r.url}/b`)
  r.answer({ status: 200 })
  for (let i = 0; i < 3; i++) {
    clock.advance(3600_000)
    await service.callbacks.worker.runOnce()
  }
  assert.equal(r.received.length, 1, 'nothing is sent to a disabled endpoint')
  const [waitingFirst] = await deliveryOf(first.id)
  const [waitingSecond] = await deliveryOf(second.id)
  assert.equal(waitingFirst!.state, 'due')
  assert.equal(waitingFirst!.attempts, 1, 'only the 410 attempt counts')
  assert.notEqual(waitingFirst!.paused_at, null)
  assert.equal(waitingSecond!.attempts, 0, 'no retry spent')
  assert.notEqual(waitingSecond!.paused_at, null)
  assert.equal((await endpoints(apiKey))[0].pending_deliveries, 2)

  const enabled = await service.api(apiKey, { method: 'POST', url: '/v2/endpoints/enable', payload: { url: `${r.url}/anything` } })
  assert.equal(enabled.statusCode, 200, enabled.body)
  assert.equal(enabled.json().state, 'active')
  assert.equal(enabled.json().disabled_reason, null)
  assert.equal(await service.callbacks.worker.runOnce(), 2)
  await r.waitFor(3)
  assert.deepEqual(
    r.received
      .slice(1)
      .map((got) => got.path)
      .sort(),
    ['/a', '/b'],
  )
  assert.equal((await deliveryOf(first.id))[0]!.state, 'delivered')
  assert.equal((await deliveryOf(second.id))[0]!.state, 'delivered')
  const [healthy] = await endpoints(apiKey)
  assert.equal(healthy.last_success_at, clock().toISOString())
  assert.equal(healthy.failing_since, null)
  assert.equal(healthy.pending_deliveries, 0)
  const metrics = await service.app.inject({ method: 'GET', url: '/metrics' })
  assert.match(metrics.body, /paywatch_callback_endpoints_disabled_total\{reason="gone"\} 1/)
  assert.match(metrics.body, /paywatch_callback_endpoints\{state="active"\} \d+/)
})

test('an endpoint answering nothing but failures for PAYWATCH_ENDPOINT_DISABLE_AFTER seconds is disabled', async () => {
  const { accountId, apiKey } = await service.newAccount()
  const r = await receiver({ status: 500 })
  const tracking = await complete(accountId, `${r.url}/cb`)
  const startedFailing = clock().toISOString()
  await service.callbacks.worker.runOnce()
  assert.equal((await endpoints(apiKey))[0].state, 'active')
  clock.advance(60_000)
  await service.callbacks.worker.runOnce()
  assert.equal((await endpoints(apiKey))[0].state, 'active', '60 s of failures')
  clock.advance(60_000)
  await service.callbacks.worker.runOnce()
  const [endpoint] = await endpoints(apiKey)
  assert.equal(endpoint.state, 'disabled', '120 s of failures')
  assert.equal(endpoint.failing_since, startedFailing)
  assert.match(endpoint.disabled_reason, /^nothing but failures since /)
  const [delivery] = await deliveryOf(tracking.id)
  assert.equal(delivery!.attempts, 3)
  clock.advance(3600_000)
  await service.callbacks.worker.runOnce()
  assert.equal((await deliveryOf(tracking.id))[0]!.attempts, 3, 'it waits')
})

test('a success in between starts the failure streak over', async () => {
  const { accountId, apiKey } = await service.newAccount()
  const r = await receiver({ status: 500 })
  await complete(accountId, `${r.url}/1`)
  await service.callbacks.worker.runOnce()
  clock.advance(90_000)
  r.answer({ status: 200 })
  await complete(accountId, `${r.url}/2`)
  await service.callbacks.worker.runOnce() // both due: the retry and the new one
  r.answer({ status: 500 })
  await complete(accountId, `${r.url}/3`)
  clock.advance(20_000)
  await service.callbacks.worker.runOnce()
  const [endpoint] = await endpoints(apiKey)
  assert.equal(endpoint.state, 'active')
  assert.notEqual(endpoint.failing_since, null)
})

test('429 and 503 with Retry-After delay the next attempt to at least that time; without it the schedule holds', async () => {
  const { accountId } = await service.newAccount()
  const cases: [() => Answer, number | null][] = [
    [() => ({ status: 503, headers: { 'retry-after': '3600' } }), 3600],
    [() => ({ status: 429, headers: { 'retry-after': new Date(clock().getTime() + 7200_000).toUTCString() } }), 7200],
    [() => ({ status: 429, headers: { 'retry-after': '1' } }), null], // shorter than the schedule: the schedule wins
    [() => ({ status: 500, headers: { 'retry-after': '3600' } }), null], // only 429 and 503 ask
  ]
  for (const [answerNow, seconds] of cases) {
    const answer = answerNow()
    const r = await receiver(answer)
    const tracking = await complete(accountId, `${r.url}/cb`)
    const now = clock().getTime()
    await service.callbacks.worker.runOnce()
    const [delivery] = await deliveryOf(tracking.id)
    const delay = (new Date(delivery!.next_attempt_at).getTime() - now) / 1000
    if (seconds === null) assert.ok(delay >= 15 && delay <= 44, `${answer.status}: schedule, ${delay} s`)
    else assert.equal(delay, seconds, `${answer.status} ${answer.headers!['retry-after']}`)
    // Not attempted before that time.
    clock.advance((delay - 1) * 1000)
    await service.callbacks.worker.runOnce()
    assert.equal(r.received.length, 1)
    clock.advance(1000)
    await service.callbacks.worker.runOnce()
    assert.equal(r.received.length, 2)
  }
})

test('a 3xx is a failed attempt and is never followed', async () => {
  const { accountId } = await service.newAccount()
  const target = await receiver({ status: 200 })
  const r = await receiver({ status: 307, headers: { location: `${target.url}/moved` } })
  const tracking = await complete(accountId, `${r.url}/cb`)
  await service.callbacks.worker.runOnce()
  const [delivery] = await deliveryOf(tracking.id)
  assert.equal(delivery!.state, 'due')
  assert.equal(delivery!.last_status_code, 307)
  assert.equal(target.received.length, 0)
})

test('recover since T resends exactly the deliveries to that endpoint whose last attempt failed, or that died, since T', async () => {
  const { accountId, apiKey } = await service.newAccount()
  const r = await receiver({ status: 500 })
  const other = await receiver({ status: 500 })
  const failedBefore = await complete(accountId, `${r.url}/before`)
  await service.callbacks.worker.runOnce()
  clock.advance(3600_000)
  const since = clock().toISOString()
  const later = new Date(clock().getTime() + 86400_000)
  await db().updateTable('deliveries').set({ next_attempt_at: later }).where('tracking_id', '=', failedBefore.id).execute()
  r.answer({ status: 200 })
  const delivered = await complete(accountId, `${r.url}/ok`)
  await service.callbacks.worker.runOnce()
  r.answer({ status: 500 })
  const failedAfter = await complete(accountId, `${r.url}/after`)
  const dead = await complete(accountId, `${r.url}/dead`)
  await db().updateTable('deliveries').set({ attempts: 25 }).where('tracking_id', '=', dead.id).execute()
  const otherEndpoint = await complete(accountId, `${other.url}/x`)
  await service.callbacks.worker.runOnce() // failedAfter fails, dead dies, otherEndpoint fails
  assert.equal((await deliveryOf(dead.id))[0]!.state, 'dead')
  assert.equal((await deliveryOf(delivered.id))[0]!.state, 'delivered')
  assert.equal((await deliveryOf(failedAfter.id))[0]!.state, 'due')
  assert.equal((await deliveryOf(failedBefore.id))[0]!.state, 'due')
  r.answer({ status: 200 })

  const seen = r.received.length
  const res = await service.api(apiKey, { method: 'POST', url: '/v2/endpoints/recover', payload: { url: r.url, since } })
  assert.equal(res.statusCode, 202, res.body)
  assert.deepEqual(res.json(), { redelivered: 2 })
  await service.callbacks.worker.runOnce()
  assert.deepEqual(
    r.received
      .slice(seen)
      .map((got) => got.path)
      .sort(),
    ['/after', '/dead'],
  )
  assert.equal(other.received.length, 1, 'another endpoint is not touched')
  assert.equal((await deliveryOf(otherEndpoint.id))[0]!.attempts, 1)
  const bad = await service.api(apiKey, { method: 'POST', url: '/v2/endpoints/recover', payload: { url: r.url } })
  assert.equal(bad.statusCode, 400)
  assert.equal(bad.json().errors[0].path, 'since')
})
