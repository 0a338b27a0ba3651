import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTestService, type TestService } from '../support/service.ts'
import { type Tracking } from '../../src/domain/tracking.ts'
import { fullRecord } from '../../src/domain/records.ts'
import { closedPortUrl, eventually, insertCompleted, insertPending, startReceiver, verifiedBy, type Receiver } from './support.ts'

let service: TestService
let accountId: string
let apiKey: string
let publicKey: string
const receivers: Receiver[] = []
const receiver = async (...args: Parameters<typeof startReceiver>) => {
  const r = await startReceiver(...args)
  receivers.push(r)
  return r
}

before(async () => {
  // Callbacks to the local receivers are allowed here; the SSRF guard has its own test file.
  service = await startTestService({
    env: { PAYWATCH_CALLBACK_TIMEOUT: '1', PAYWATCH_RATE_RPS: '100000', PAYWATCH_RATE_PARALLEL: '1000' },
    callbacks: { pollMs: 25 },
  })
  ;({ accountId, apiKey } = await service.newAccount())
  const res = await service.app.inject({ method: 'GET', url: '/v2/public-key' })
  assert.equal(res.statusCode, 200)
  publicKey = res.body
})
after(async () => {
  await service?.close()
  for (const r of receivers) await r.close()
})

const deliveriesOf = async (secretId: string) => {
  const res = await service.api(apiKey, { method: 'GET', url: `/v2/payments/${secretId}/deliveries` })
  assert.equal(res.statusCode, 200, res.body)
  return res.json<{
    deliveries: {
      id: string
      state: string
      attempt_count: number
      next_attempt_at: string | null
      reason: string
      attempts: {
        attempt: number
        outcome: string
        status_code: number | null
        error: string | null
        response: string | null
        duration_ms: number
      }[]
    }[]
  }>().deliveries
}
const record = async (secretId: string) => (await service.api(apiKey, { method: 'GET', url: `/v2/payments/${secretId}` })).json()

test('GET /v2/public-key serves the SPKI PEM without an API key, and JSON on request', async () => {
  assert.match(publicKey, /^-----BEGIN PUBLIC KEY-----\n[\s\S]+\n-----END PUBLIC KEY-----\n$/)
  const json = await service.app.inject({ method: 'GET', url: '/v2/public-key', headers: { accept: 'application/json' } })
  assert.equal(json.json().public_key, publicKey)
})

test('200: delivered once, signed over the exact bytes (non-ASCII escaped), released', async () => {
  const r = await receiver(() => ({ status: 200 }))
  const released: string[] = []
  service.events.on('released', (t) => released.push(t.id))
  const tracking = await insertCompleted(service.database.db, accountId, {
    callback: `${r.url}/paid`,
    payload: { text: 'Grüße – 支払い 🎉', n: 1 },
  })
  service.events.emit('completed', tracking)
  const [got] = await r.waitFor(1)
  assert.equal(got!.path, '/paid')
  assert.equal(got!.headers['content-type'], 'application/json')
  assert.match(String(got!.headers['x-delivery-id']), /^[0-9a-f-]{36}$/)
  assert.match(got!.body, /^[\x20-\x7e]+$/, 'the body is pure ASCII')
  assert.ok(got!.body.includes('\\u00fc') && got!.body.includes('\\ud83c\\udf89'), got!.body)
  const body = JSON.parse(got!.body)
  assert.equal(body.payload.text, 'Grüße – 支払い 🎉')
  assert.equal(body.status, 'success')
  assert.equal(body.secret_id, tracking.secretId)
  assert.match(String(got!.headers['x-signature']), /^[A-Za-z0-9_-]+={0,2}$/)
  assert.equal(String(got!.headers['x-signature']).length % 4, 0, 'base64url with padding')
  assert.equal(await verifiedBy(got!, publicKey), true)
  assert.equal(await verifiedBy({ ...got!, body: got!.body.replace('success', 'failed') }, publicKey), false)

  await eventually(async () => (await record(tracking.secretId)).release === true)
  assert.deepEqual(released, [tracking.id])
  const [delivery] = await deliveriesOf(tracking.secretId)
  assert.equal(delivery!.state, 'delivered')
  assert.equal(delivery!.id, got!.headers['x-delivery-id'])
  assert.equal(delivery!.attempts.length, 1)
  assert.equal(delivery!.attempts[0]!.status_code, 200)
  assert.equal(r.received.length, 1)
})

test('GET /v2/payments/{secret_id} carries x-signature over its exact (ASCII) body', async () => {
  const tracking = await insertPending(service.database.db, accountId, { payload: { note: 'naïve café' } })
  const res = await service.api(apiKey, { method: 'GET', url: `/v2/payments/${tracking.secretId}` })
  assert.equal(res.statusCode, 200)
  assert.match(res.body, /^[\x20-\x7e]+$/)
  assert.equal(res.json().payload.note, 'naïve café')
  assert.equal(await verifiedBy({ body: res.body, headers: res.headers }, publicKey), true)
  const again = await service.api(apiKey, { method: 'GET', url: `/v2/payments/${tracking.secretId}` })
  assert.equal(again.headers['x-signature'], res.headers['x-signature'], 'an unchanged record is not signed again')
})

test("202: accepted, release waits; a JSON forward_to replaces the record's", async () => {
  const r = await receiver(() => ({
    status: 202,
    body: '{"forward_to":"https://shop.example/next"}',
    headers: { 'content-type': 'application/json' },
  }))
  const tracking = await insertCompleted(service.database.db, accountId, { callback: `${r.url}/cb`, forwardTo: 'https://shop.example/old' })
  await r.waitFor(1)
  const [delivery] = await eventually(async () => {
    const list = await deliveriesOf(tracking.secretId)
    return list[0]?.state === 'accepted' && list
  })
  assert.equal(delivery!.attempts[0]!.response, '{"forward_to":"https://shop.example/next"}')
  const stored = await record(tracking.secretId)
  assert.equal(stored.release, false)
  assert.equal(stored.forward_to, 'https://shop.example/next')
})

test('a forward_to that is not an http(s) URL or path, or holds a NUL, is ignored; the attempt is recorded', async () => {
  const answers = [
    '{"forward_to":"javascript:alert(1)"}',
    '{"forward_to":"https://shop.example/\\u0000x"}',
    '{"forward_to":"data:text/html,hi"}',
    // Refused at create too: these lead the browser to another site although they look like paths.
    '{"forward_to":"//evil.example/x"}',
    '{"forward_to":"/\\\\evil.example/x"}',
    '{"forward_to":"/\\t/evil.example/x"}',
    '{"forward_to":"https:evil.example/x"}',
    '{"forward_to":" /x"}',
  ]
  for (const answer of answers) {
    const r = await receiver(() => ({ status: 200, body: answer, headers: { 'content-type': 'application/json' } }))
    const tracking = await insertCompleted(service.database.db, accountId, {
      callback: `${r.url}/cb`,
      forwardTo: 'https://shop.example/kept',
    })
    await r.waitFor(1)
    const stored = await eventually(async () => {
      const current = await record(tracking.secretId)
      return current.release === true && current
    })
    assert.equal(stored.forward_to, 'https://shop.example/kept', answer)
    const [delivery] = await deliveriesOf(tracking.secretId)
    assert.equal(delivery!.state, 'delivered')
  }
})

test('200 with forward_to: released and forwarded there; the released event carries the record as stored', async () => {
  const r = await receiver(() => ({ status: 200, body: '{"forward_to":"/orders/42"}' }))
  const events: Tracking[] = []
  const onReleased = (t: Tracking) => events.push(t)
  service.events.on('released', onReleased)
  try {
    const tracking = await insertCompleted(service.database.db, accountId, { callback: `${r.url}/cb`, payload: { b: 1, a: 'x' } })
    await r.waitFor(1)
    const stored = await eventually(async () => {
      const current = await record(tracking.secretId)
      return current.release === true && current
    })
    assert.equal(stored.forward_to, '/orders/42')
    const released = events.find((t) => t.id === tracking.id)
    assert.ok(released, 'a released event for the tracking')
    assert.deepEqual(fullRecord(released), stored)
  } finally {
    service.events.off('released', onReleased)
  }
})

test('500, timeout (also after a 200 status line) and connection refused are failed attempts, retried 15–44 s later; other endpoints are not held up', async () => {
  const failing = await receiver(() => ({ status: 500, body: 'database exploded' }))
  const slow = await receiver(() => ({ status: 200, delayMs: 3000 }))
  const stalled = await receiver(() => ({ status: 200, stall: true, body: '{"forward_to":"https://shop.example/thanks"' }))
  const fast = await receiver(() => ({ status: 200 }))
  const t500 = await insertCompleted(service.database.db, accountId, { callback: `${failing.url}/cb` })
  const tSlow = await insertCompleted(service.database.db, accountId, { callback: `${slow.url}/cb` })
  const tClosed = await insertCompleted(service.database.db, accountId, { callback: await closedPortUrl() })
  const tStalled = await insertCompleted(service.database.db, accountId, { callback: `${stalled.url}/cb` })
  const tFast = await insertCompleted(service.database.db, accountId, { callback: `${fast.url}/cb` })
  await fast.waitFor(1)
  await slow.waitFor(1)
  assert.equal(
    (await deliveriesOf(tSlow.secretId))[0]!.attempt_count,
    0,
    'the fast endpoint was served while the slow one was still answering',
  )
  const fastDone = await eventually(async () => (await deliveriesOf(tFast.secretId))[0]?.state === 'delivered')
  assert.ok(fastDone)

  for (const [tracking, check] of [
    [
      t500,
      (a: { status_code: number | null; error: string | null; response: string | null }) =>
        a.status_code === 500 && a.response === 'database exploded',
    ],
    [tSlow, (a: { status_code: number | null; error: string | null }) => a.status_code === null && /^timeout/.test(a.error ?? '')],
    [tClosed, (a: { status_code: number | null; error: string | null }) => a.status_code === null && /ECONNREFUSED/.test(a.error ?? '')],
    [tStalled, (a: { status_code: number | null; error: string | null }) => a.status_code === 200 && /^timeout/.test(a.error ?? '')],
  ] as const) {
    const [delivery] = await eventually(async () => {
      const list = await deliveriesOf(tracking.secretId)
      return list[0]?.attempt_count === 1 && list
    }, 5000)
    assert.equal(delivery!.state, 'due')
    assert.equal(delivery!.attempts[0]!.outcome, 'failed')
    assert.ok(check(delivery!.attempts[0]!), JSON.stringify(delivery!.attempts[0]))
    const delay = (Date.parse(delivery!.next_attempt_at!) - Date.now()) / 1000
    assert.ok(delay > 10 && delay <= 44, `next attempt in ${delay} s`)
    assert.equal((await record(tracking.secretId)).release, false)
  }
})

test('integration: signed with its own key, which the service key does not verify', async () => {
  const created = await service.admin({ method: 'POST', url: `/admin/accounts/${accountId}/integrations`, payload: { name: 'shop' } })
  assert.equal(created.statusCode, 201, created.body)
  const integration = created.json<{ id: string; public_key: string }>()
  assert.match(integration.public_key, /^-----BEGIN PUBLIC KEY-----/)
  const r = await receiver(() => ({ status: 200 }))
  const tracking = await insertCompleted(service.database.db, accountId, {
    callback: `${r.url}/cb`,
    integrationId: integration.id,
    payload: { integration: integration.id, city: 'Zürich' },
  })
  const [got] = await r.waitFor(1)
  assert.equal(await verifiedBy(got!, integration.public_key), true)
  assert.equal(await verifiedBy(got!, publicKey), false)
  const res = await service.api(apiKey, { method: 'GET', url: `/v2/payments/${tracking.secretId}` })
  assert.equal(await verifiedBy({ body: res.body, headers: res.headers }, integration.public_key), true)
})

test('earlier (uuid) trackings are delivered in the earlier shape', async () => {
  const r = await receiver(() => ({ status: 200 }))
  const tracking = await insertCompleted(
    service.database.db,
    accountId,
    { shape: 'earlier', callback: `${r.url}/cb` },
    { status: 'failed', failedReason: 'AMOUNT_MISMATCH' },
  )
  const [got] = await r.waitFor(1)
  const body = JSON.parse(got!.body)
  assert.equal(body.uuid, tracking.secretId)
  assert.equal(body.secret_id, undefined)
  assert.equal(body.failed_reason, 'AMOUNT_MISMATCH')
  assert.equal(typeof body.nonce, 'number')
  assert.equal(await verifiedBy(got!, publicKey), true)
})

test('redeliver: 409 while pending or without callback, 404 for another account, else a new delivery now', async () => {
  const pending = await insertPending(service.database.db, accountId, { callback: 'http://127.0.0.1:9/cb' })
  const post = (key: string, secretId: string) =>
    service.api(key, {
      method: 'POST',
      url: `/v2/payments/${secretId}/redeliver`,
      headers: { 'content-type': 'application/json' },
      payload: '',
    })
  assert.equal((await post(apiKey, pending.secretId)).statusCode, 409)
  const silent = await insertCompleted(service.database.db, accountId, {})
  const noCallback = await post(apiKey, silent.secretId)
  assert.equal(noCallback.statusCode, 409)
  assert.equal(noCallback.json().code, 'CONFLICT')

  const r = await receiver(() => ({ status: 200 }))
  const tracking = await insertCompleted(service.database.db, accountId, { callback: `${r.url}/cb` })
  await r.waitFor(1)
  await eventually(async () => (await deliveriesOf(tracking.secretId))[0]?.state === 'delivered')
  const other = await service.newAccount('other')
  assert.equal((await post(other.apiKey, tracking.secretId)).statusCode, 404)
  assert.equal((await service.api(other.apiKey, { method: 'GET', url: `/v2/payments/${tracking.secretId}/deliveries` })).statusCode, 404)

  const again = await post(apiKey, tracking.secretId)
  assert.equal(again.statusCode, 202, again.body)
  assert.equal(again.json().reason, 'redeliver')
  const [, second] = await r.waitFor(2)
  assert.equal(second!.headers['x-delivery-id'], again.json().id)
  assert.notEqual(second!.headers['x-delivery-id'], r.received[0]!.headers['x-delivery-id'])
  assert.equal(await verifiedBy(second!, publicKey), true)
  const list = await eventually(async () => {
    const all = await deliveriesOf(tracking.secretId)
    return all.every((d) => d.state === 'delivered') && all
  })
  assert.equal(list.length, 2)
})

test('metrics: attempts by outcome, queue depth, oldest due age', async () => {
  const res = await service.app.inject({ method: 'GET', url: '/metrics' })
  assert.match(res.body, /paywatch_callback_attempts_total\{outcome="delivered"\} [1-9]/)
  assert.match(res.body, /paywatch_callback_attempts_total\{outcome="failed"\} [1-9]/)
  assert.match(res.body, /paywatch_callback_queue_depth [1-9]/)
  assert.match(res.body, /paywatch_callback_oldest_due_age_seconds \d/)
})
