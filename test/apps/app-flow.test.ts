import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startAnvil, type Anvil } from '../support/index.ts'
import { manualClock } from '../support/clock.ts'
import { startTestService, type TestService } from '../support/service.ts'
import { assertProblem, connectShop, HIGH_LIMITS, settle, track, VERSION, type Account } from '../links/support.ts'

let anvil: Anvil
let service: TestService
/** Owns the app. */
let developer: Account
/** Grants the app access to its data. */
let merchant: Account
let stranger: Account
let appId: string
const clock = manualClock(new Date('2026-05-01T00:00:00.000Z'))

before(async () => {
  anvil = await startAnvil()
  service = await startTestService({
    chains: { ethereum: { rpc: [anvil.rpcUrl], chainId: anvil.chainId } },
    background: false,
    clock,
    env: HIGH_LIMITS,
  })
  developer = await service.newAccount('developer')
  merchant = await service.newAccount('merchant')
  stranger = await service.newAccount('stranger')
  const app = await service.admin({ method: 'POST', url: `/admin/accounts/${developer.accountId}/apps`, payload: { name: 'Reports' } })
  assert.equal(app.statusCode, 201, app.body)
  appId = app.json().id
  await connectShop(service, merchant.accountId, 'merchant.myshopify.com')
  await connectShop(service, merchant.accountId, 'second.example.com')
  const paid = await track(service, merchant, { shop: 'merchant.myshopify.com', shopify_payment_id: 'gid-1', payload: { order: 'M-1' } })
  await settle(service, merchant, paid.secretId, clock())
  await track(service, merchant, { shop: 'merchant.myshopify.com', shopify_payment_id: 'gid-pending' })
  // The developer's own Shopify payment: never served through a merchant's grant.
  await connectShop(service, developer.accountId, 'dev.myshopify.com')
  const own = await track(service, developer, { shop: 'dev.myshopify.com', shopify_payment_id: 'gid-dev' })
  await settle(service, developer, own.secretId, clock())
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

async function grant(scopes: unknown, extra: Record<string, unknown> = {}, app = appId) {
  const res = await service.admin({
    method: 'POST',
    url: `/admin/apps/${app}/grants`,
    payload: { account_id: merchant.accountId, scopes, ...extra },
  })
  return res
}

const asApp = (account: Account, url: string, token: string | undefined, headers: Record<string, string> = VERSION) =>
  service.api(account.apiKey, {
    method: 'GET',
    url,
    headers: { ...headers, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
  })

test('grant, read, revoke: the token works until revoked, then 401', async () => {
  const res = await grant(['payments.shopify.read', 'checkouts.shopify.read'])
  assert.equal(res.statusCode, 201, res.body)
  const { access_token: token, id: grantId } = res.json()
  assert.match(token, /^pwt_[A-Za-z0-9_-]{32}$/)

  const payment = await asApp(developer, '/apps/payments/shopify/gid-1', token)
  assert.equal(payment.statusCode, 200, payment.body)
  assert.deepEqual(payment.json().payload, { order: 'M-1' }, "the granting account's payment")
  assert.equal(payment.json().secret_id, undefined, 'summary shape with x-api-version')
  assert.equal(payment.json().commitment, 'confirmed')
  const full = await asApp(developer, '/apps/payments/shopify/gid-1', token, {})
  assert.equal(full.json().status, 'success', 'full record without x-api-version')
  assert.equal(full.json().decimals, 18)

  const shops = await asApp(developer, '/apps/checkouts/shopify', token)
  assert.equal(shops.statusCode, 200, shops.body)
  assert.deepEqual(shops.json(), [{ shop: 'merchant.myshopify.com' }, { shop: 'second.example.com' }])

  // Only success, and only the granting account's.
  assertProblem(await asApp(developer, '/apps/payments/shopify/gid-pending', token), 404, 'NOT_FOUND')
  assertProblem(await asApp(developer, '/apps/payments/shopify/gid-dev', token), 404, 'NOT_FOUND')
  assertProblem(
    await asApp(developer, '/apps/payments/shopify/gid-1', token, { 'x-api-version': '1999-01' }),
    400,
    'UNSUPPORTED_API_VERSION',
  )

  const listed = await service.admin({ method: 'GET', url: `/admin/apps/${appId}/grants` })
  assert.equal(listed.json().find((g: { id: string }) => g.id === grantId).revoked_at, null)
  assert.ok(!listed.body.includes(token), 'tokens are never listed')
  assert.equal((await service.admin({ method: 'DELETE', url: `/admin/grants/${grantId}` })).statusCode, 204)
  const revoked = assertProblem(await asApp(developer, '/apps/payments/shopify/gid-1', token), 401, 'UNAUTHORIZED')
  assert.match(revoked.detail, /revoked/)
  assertProblem(await asApp(developer, '/apps/checkouts/shopify', token), 401, 'UNAUTHORIZED')
  assertProblem(await service.admin({ method: 'DELETE', url: '/admin/grants/no-such-grant' }), 404, 'NOT_FOUND')
})

test('a token without the needed scope is a 403 naming the scope; payments.read stands for payments.shopify.read', async () => {
  const paymentsOnly = (await grant(['payments.read'])).json().access_token
  assert.equal((await asApp(developer, '/apps/payments/shopify/gid-1', paymentsOnly)).statusCode, 200)
  const refused = assertProblem(await asApp(developer, '/apps/checkouts/shopify', paymentsOnly), 403, 'FORBIDDEN')
  assert.match(refused.detail, /checkouts\.shopify\.read/)

  const shopsOnly = (await grant(['checkouts.shopify.read'])).json().access_token
  assert.equal((await asApp(developer, '/apps/checkouts/shopify', shopsOnly)).statusCode, 200)
  const noPayments = assertProblem(await asApp(developer, '/apps/payments/shopify/gid-1', shopsOnly), 403, 'FORBIDDEN')
  assert.match(noPayments.detail, /payments\.shopify\.read/)
})

test("a token with another account's key, or of another app, is a 401", async () => {
  const token = (await grant(['payments.shopify.read', 'checkouts.shopify.read'])).json().access_token
  // The granting account's own key is not the app's.
  assertProblem(await asApp(merchant, '/apps/payments/shopify/gid-1', token), 401, 'UNAUTHORIZED')
  assertProblem(await asApp(stranger, '/apps/checkouts/shopify', token), 401, 'UNAUTHORIZED')
  // An app of the stranger, with a grant of its own: its token is no good with the developer's key.
  const otherApp = (
    await service.admin({ method: 'POST', url: `/admin/accounts/${stranger.accountId}/apps`, payload: { name: 'Other' } })
  ).json().id
  const otherToken = (await grant(['payments.shopify.read'], {}, otherApp)).json().access_token
  assertProblem(await asApp(developer, '/apps/payments/shopify/gid-1', otherToken), 401, 'UNAUTHORIZED')
  assert.equal((await asApp(stranger, '/apps/payments/shopify/gid-1', otherToken)).statusCode, 200)
})

test('missing, malformed and unknown tokens are 401; the API key is still required', async () => {
  const missing = assertProblem(await asApp(developer, '/apps/checkouts/shopify', undefined), 401, 'UNAUTHORIZED')
  assert.match(missing.detail, /Bearer/)
  for (const authorization of [
    'Basic abc',
    'Bearer',
    'Bearer ',
    'pwt_x',
    `Bearer ${'x'.repeat(5000)}`,
    'Bearer pwt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  ]) {
    const res = await service.api(developer.apiKey, {
      method: 'GET',
      url: '/apps/checkouts/shopify',
      headers: { authorization, ...VERSION },
    })
    assertProblem(res, 401, 'UNAUTHORIZED')
    assert.match(String(res.headers['www-authenticate']), /^Bearer/)
  }
  const token = (await grant(['checkouts.shopify.read'])).json().access_token
  assertProblem(
    await service.app.inject({ method: 'GET', url: '/apps/checkouts/shopify', headers: { authorization: `Bearer ${token}` } }),
    401,
    'UNAUTHORIZED',
  )
})

test('an expired grant is a 401; deleting the app ends all its grants', async () => {
  const expiring = await grant(['checkouts.shopify.read'], { expires_at: '2026-05-01T01:00:00Z' })
  assert.equal(expiring.statusCode, 201, expiring.body)
  assert.equal(expiring.json().expires_at, '2026-05-01T01:00:00.000Z')
  const token = expiring.json().access_token
  assert.equal((await asApp(developer, '/apps/checkouts/shopify', token)).statusCode, 200)
  clock.advance(3600_000)
  assertProblem(await asApp(developer, '/apps/checkouts/shopify', token), 401, 'UNAUTHORIZED')

  const lasting = (await grant(['checkouts.shopify.read'])).json().access_token
  assert.equal((await asApp(developer, '/apps/checkouts/shopify', lasting)).statusCode, 200)
  const doomed = (
    await service.admin({ method: 'POST', url: `/admin/accounts/${developer.accountId}/apps`, payload: { name: 'Doomed' } })
  ).json().id
  const doomedToken = (await grant(['checkouts.shopify.read'], {}, doomed)).json().access_token
  assert.equal((await service.admin({ method: 'DELETE', url: `/admin/apps/${doomed}` })).statusCode, 204)
  assertProblem(await asApp(developer, '/apps/checkouts/shopify', doomedToken), 401, 'UNAUTHORIZED')
  assert.equal((await asApp(developer, '/apps/checkouts/shopify', lasting)).statusCode, 200, 'other apps unaffected')
})

test('admin: apps and grants validate their input', async () => {
  const apps = await service.admin({ method: 'GET', url: `/admin/accounts/${developer.accountId}/apps` })
  assert.ok(apps.json().some((a: { id: string; name: string }) => a.id === appId && a.name === 'Reports'))
  assertProblem(
    await service.admin({ method: 'POST', url: `/admin/accounts/${developer.accountId}/apps`, payload: {} }),
    400,
    'VALIDATION_FAILED',
  )
  assertProblem(await service.admin({ method: 'POST', url: '/admin/accounts/nobody/apps', payload: { name: 'x' } }), 404, 'NOT_FOUND')
  for (const [scopes, extra] of [
    [[], {}],
    [['payments.write'], {}],
    ['payments.read', {}],
    [['payments.read', 7], {}],
    [['payments.read'], { expires_at: '2020-01-01T00:00:00Z' }],
    [['payments.read'], { expires_at: 'soon' }],
  ] as const) {
    const body = assertProblem(await grant(scopes, extra), 400, 'VALIDATION_FAILED')
    assert.ok(body.errors.length > 0, JSON.stringify(scopes))
  }
  // Names every plain object inherits are not scopes.
  for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
    const body = assertProblem(await grant([name]), 400, 'VALIDATION_FAILED')
    assert.equal(body.errors[0].path, 'scopes', name)
  }
  const missingAccount = await service.admin({ method: 'POST', url: `/admin/apps/${appId}/grants`, payload: { scopes: ['payments.read'] } })
  assert.equal(assertProblem(missingAccount, 400, 'VALIDATION_FAILED').errors[0].path, 'account_id')
  assertProblem(
    await service.admin({
      method: 'POST',
      url: `/admin/apps/${appId}/grants`,
      payload: { account_id: 'nobody', scopes: ['payments.read'] },
    }),
    404,
    'NOT_FOUND',
  )
  assertProblem(await grant(['payments.read'], {}, 'no-such-app'), 404, 'NOT_FOUND')
  assertProblem(
    await service.app.inject({
      method: 'POST',
      url: `/admin/apps/${appId}/grants`,
      payload: { account_id: merchant.accountId, scopes: ['payments.read'] },
    }),
    401,
    'UNAUTHORIZED',
  )
})
