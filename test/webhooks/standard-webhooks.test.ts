import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { manualClock } from '../support/clock.ts'
import { startTestService, type TestService } from '../support/service.ts'
import { insertCompleted, startReceiver, verifiedBy, type Receiver } from '../callbacks/support.ts'
import { standardVerifies, verifiedByBoth } from './support.ts'

const clock = manualClock(new Date())
let service: TestService
let receiver: Receiver
let servicePublicKey: string

before(async () => {
  receiver = await startReceiver(() => ({ status: 200 }))
  // No background worker: each test makes the attempts with runOnce, at the injected clock's time.
  service = await startTestService({ clock, background: false })
  servicePublicKey = (await service.app.inject({ method: 'GET', url: '/v2/public-key' })).body
})
after(async () => {
  await service?.close()
  await receiver?.close()
})

/** Completes a tracking to the receiver and delivers it; answers the callback as received. */
async function deliver(accountId: string, overrides: Record<string, unknown> = {}) {
  const before = receiver.received.length
  const tracking = await insertCompleted(
    service.database.db,
    accountId,
    { callback: `${receiver.url}/hook`, ...overrides },
    undefined,
    clock(),
  )
  assert.equal(await service.callbacks.worker.runOnce(), 1)
  const received = await receiver.waitFor(before + 1)
  return { tracking, got: received[before]! }
}

test('an integration answers its webhook_secret once; its callbacks verify with standardwebhooks and DePay, webhook-id = x-delivery-id', async () => {
  const { accountId } = await service.newAccount()
  const created = await service.admin({
    method: 'POST',
    url: `/admin/accounts/${accountId}/integrations`,
    payload: { name: 'shop', reversal_events: true },
  })
  assert.equal(created.statusCode, 201, created.body)
  const integration = created.json<{ id: string; public_key: string; webhook_secret: string; reversal_events: boolean; name: string }>()
  assert.match(integration.webhook_secret, /^whsec_[A-Za-z0-9+/]{40,}={0,2}$/)
  assert.ok(Buffer.from(integration.webhook_secret.slice(6), 'base64').length >= 24)
  assert.equal(integration.reversal_events, true)
  assert.equal(integration.name, 'shop')
  const shown = await service.admin({ method: 'GET', url: `/admin/integrations/${integration.id}` })
  assert.equal(shown.json().webhook_secret, undefined, 'the secret is shown only at creation')
  const refused = await service.admin({
    method: 'POST',
    url: `/admin/accounts/${accountId}/integrations`,
    payload: { reversal_events: 'yes' },
  })
  assert.equal(refused.statusCode, 400)
  assert.equal(refused.json().errors[0].path, 'reversal_events')

  const { got } = await deliver(accountId, { integrationId: integration.id })
  assert.equal(got.headers['webhook-id'], got.headers['x-delivery-id'])
  assert.equal(got.headers['webhook-timestamp'], String(Math.floor(clock().getTime() / 1000)))
  assert.match(String(got.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/)
  assert.equal(got.headers['x-paywatch-event'], undefined, 'a payment callback has no event header')
  assert.ok(await verifiedByBoth(got, integration.public_key, integration.webhook_secret, clock()))
  assert.ok(!standardVerifies(got, `whsec_${Buffer.alloc(32, 1).toString('base64')}`, clock()), 'another secret does not verify')
  assert.ok(!standardVerifies({ ...got, body: got.body.replace('success', 'failed') }, integration.webhook_secret, clock()))
})

test("the account's webhook secret (POST /admin/accounts/{id}/webhook-secret) signs trackings without an integration", async () => {
  const { accountId } = await service.newAccount()
  const res = await service.admin({ method: 'POST', url: `/admin/accounts/${accountId}/webhook-secret` })
  assert.equal(res.statusCode, 201, res.body)
  const secret = res.json<{ webhook_secret: string }>().webhook_secret
  assert.match(secret, /^whsec_/)
  const { got } = await deliver(accountId)
  assert.equal(String(got.headers['webhook-signature']).split(' ').length, 1, 'a first secret has no previous one')
  assert.ok(await verifiedByBoth(got, servicePublicKey, secret, clock()))
  assert.equal((await service.admin({ method: 'POST', url: '/admin/accounts/nope/webhook-secret' })).statusCode, 404)
  const anonymous = await service.app.inject({ method: 'POST', url: `/admin/accounts/${accountId}/webhook-secret` })
  assert.equal(anonymous.statusCode, 401)
})

test('after a rotation both secrets verify for 24 hours (injected clock), then only the new one', async () => {
  const { accountId } = await service.newAccount()
  const rotate = async () =>
    (await service.admin({ method: 'POST', url: `/admin/accounts/${accountId}/webhook-secret` })).json<{ webhook_secret: string }>()
      .webhook_secret
  const old = await rotate()
  const fresh = await rotate()
  assert.notEqual(old, fresh)

  const first = (await deliver(accountId)).got
  assert.equal(String(first.headers['webhook-signature']).split(' ').length, 2, 'two space-separated signatures')
  assert.ok(await verifiedByBoth(first, servicePublicKey, fresh, clock()))
  assert.ok(standardVerifies(first, old, clock()), 'the previous secret still verifies')

  clock.advance(24 * 3600 * 1000 - 1000)
  const late = (await deliver(accountId)).got
  assert.ok(standardVerifies(late, old, clock()) && standardVerifies(late, fresh, clock()), 'still both just before 24 h')

  clock.advance(2000)
  const after = (await deliver(accountId)).got
  assert.equal(String(after.headers['webhook-signature']).split(' ').length, 1)
  assert.ok(await verifiedByBoth(after, servicePublicKey, fresh, clock()))
  assert.ok(!standardVerifies(after, old, clock()), 'the previous secret no longer verifies')
})

test('POST /v2/endpoints/test: one signed test event to the url (202); a url that is no http(s) URL is 400', async () => {
  const { accountId, apiKey } = await service.newAccount()
  const other = await service.newAccount()
  const secret = (await service.admin({ method: 'POST', url: `/admin/accounts/${accountId}/webhook-secret` })).json().webhook_secret
  await deliver(accountId) // the account now has this endpoint
  const before = receiver.received.length
  const res = await service.api(apiKey, { method: 'POST', url: '/v2/endpoints/test', payload: { url: `${receiver.url}/hook` } })
  assert.equal(res.statusCode, 202, res.body)
  const [got] = (await receiver.waitFor(before + 1)).slice(before)
  assert.equal(got!.path, '/hook')
  assert.equal(got!.headers['x-paywatch-event'], 'test')
  assert.equal(got!.headers['webhook-id'], res.json().id)
  assert.equal(got!.headers['x-delivery-id'], res.json().id)
  const body = JSON.parse(got!.body)
  assert.deepEqual(Object.keys(body), ['event', 'sent_at'])
  assert.equal(body.event, 'test')
  assert.equal(body.sent_at, clock().toISOString())
  assert.ok(await verifiedBy(got!, servicePublicKey))
  assert.ok(standardVerifies(got!, secret, clock()))

  // Any callback url the account may use, also one nothing was delivered to yet (docs/api.md §8; the
  // SSRF rules are tested in test/webhooks/endpoint-test-event.test.ts).
  const fresh = await service.api(other.apiKey, { method: 'POST', url: '/v2/endpoints/test', payload: { url: `${receiver.url}/first` } })
  assert.equal(fresh.statusCode, 202, fresh.body)
  const [first] = (await receiver.waitFor(before + 2)).slice(before + 1)
  assert.equal(first!.path, '/first')
  assert.equal(first!.headers['x-paywatch-event'], 'test')
  const invalid = await service.api(apiKey, { method: 'POST', url: '/v2/endpoints/test', payload: { url: 'ftp://x' } })
  assert.equal(invalid.statusCode, 400)
  assert.equal(invalid.json().errors[0].path, 'url')
  await new Promise((resolve) => setTimeout(resolve, 50))
  assert.equal(receiver.received.length, before + 2, 'nothing was sent for the refused request')
})

test("GET /v2/endpoints lists only the caller's endpoints; another account's are 404 for enable and recover", async () => {
  const a = await service.newAccount()
  const b = await service.newAccount()
  await deliver(a.accountId)
  const listed = await service.api(a.apiKey, { method: 'GET', url: '/v2/endpoints' })
  assert.equal(listed.statusCode, 200)
  assert.deepEqual(listed.json(), [
    {
      url: receiver.url,
      state: 'active',
      disabled_reason: null,
      failing_since: null,
      last_success_at: clock().toISOString(),
      pending_deliveries: 0,
    },
  ])
  assert.deepEqual((await service.api(b.apiKey, { method: 'GET', url: '/v2/endpoints' })).json(), [])
  for (const [path, payload] of [
    ['/v2/endpoints/enable', { url: receiver.url }],
    ['/v2/endpoints/recover', { url: receiver.url, since: new Date(0).toISOString() }],
  ] as const) {
    const res = await service.api(b.apiKey, { method: 'POST', url: path, payload })
    assert.equal(res.statusCode, 404, `${path}: ${res.body}`)
    assert.equal(res.json().code, 'NOT_FOUND')
  }
  const ofAccount = await service.admin({ method: 'GET', url: `/admin/accounts/${a.accountId}/endpoints` })
  assert.deepEqual(ofAccount.json(), listed.json())
  const before = receiver.received.length
  const tested = await service.admin({
    method: 'POST',
    url: `/admin/accounts/${a.accountId}/endpoints/test`,
    payload: { url: receiver.url },
  })
  assert.equal(tested.statusCode, 202, tested.body)
  assert.equal((await receiver.waitFor(before + 1))[before]!.headers['x-paywatch-event'], 'test')
  const foreign = await service.admin({
    method: 'POST',
    url: `/admin/accounts/${b.accountId}/endpoints/enable`,
    payload: { url: receiver.url },
  })
  assert.equal(foreign.statusCode, 404)
  const all = await service.admin({ method: 'GET', url: '/admin/endpoints' })
  assert.ok(all.json().some((e: { account_id: string; url: string }) => e.account_id === a.accountId && e.url === receiver.url))
  assert.equal((await service.app.inject({ method: 'GET', url: '/v2/endpoints' })).statusCode, 401)
})
