import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startAnvil, type Anvil } from '../support/index.ts'
import { startTestService, type TestService } from '../support/service.ts'
import { assertProblem, connectShop, createLink, HIGH_LIMITS, settle, track, VERSION, type Account } from './support.ts'

let anvil: Anvil
let service: TestService
let alice: Account
let bob: Account

before(async () => {
  anvil = await startAnvil()
  service = await startTestService({
    chains: { ethereum: { rpc: [anvil.rpcUrl], chainId: anvil.chainId } },
    background: false,
    env: HIGH_LIMITS,
  })
  alice = await service.newAccount('alice')
  bob = await service.newAccount('bob')
  await connectShop(service, alice.accountId, 'alice.myshopify.com')
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

const get = (account: Account, url: string, headers: Record<string, string> = {}) =>
  service.api(account.apiKey, { method: 'GET', url, headers })

test('admin: links and shops are created, listed and removed', async () => {
  const link = await service.admin({ method: 'POST', url: `/admin/accounts/${bob.accountId}/links` })
  assert.equal(link.statusCode, 201, link.body)
  const linkId = link.json().id
  assert.equal(typeof linkId, 'string')
  const listed = await service.admin({ method: 'GET', url: `/admin/accounts/${bob.accountId}/links` })
  assert.deepEqual(
    listed.json().map((l: { id: string }) => l.id),
    [linkId],
  )

  const shop = await service.admin({ method: 'POST', url: `/admin/accounts/${bob.accountId}/shops`, payload: { shop: 'Bob.Example.com' } })
  assert.equal(shop.statusCode, 201)
  assert.equal(shop.json().shop, 'bob.example.com', 'host names are stored lower-case')
  const again = await service.admin({ method: 'POST', url: `/admin/accounts/${bob.accountId}/shops`, payload: { shop: 'bob.example.com' } })
  assert.equal(again.statusCode, 200, 'connecting twice is idempotent')
  const shops = await service.admin({ method: 'GET', url: `/admin/accounts/${bob.accountId}/shops` })
  assert.deepEqual(
    shops.json().map((s: { shop: string }) => s.shop),
    ['bob.example.com'],
  )
  assert.equal((await service.admin({ method: 'DELETE', url: `/admin/accounts/${bob.accountId}/shops/bob.example.com` })).statusCode, 204)
  assertProblem(await service.admin({ method: 'DELETE', url: `/admin/accounts/${bob.accountId}/shops/bob.example.com` }), 404, 'NOT_FOUND')
  assert.deepEqual((await service.admin({ method: 'GET', url: `/admin/accounts/${bob.accountId}/shops` })).json(), [])
})

test('admin: bad input is a 400, unknown account a 404, no admin token a 401', async () => {
  for (const shop of ['https://x.myshopify.com', 'x.myshopify.com/path', '', 'a b.com', '-x.com', 42]) {
    const res = await service.admin({ method: 'POST', url: `/admin/accounts/${bob.accountId}/shops`, payload: { shop } })
    assert.equal(assertProblem(res, 400, 'VALIDATION_FAILED').errors[0].path, 'shop', String(shop))
  }
  assertProblem(
    await service.admin({ method: 'POST', url: `/admin/accounts/${bob.accountId}/links`, payload: { name: 7 } }),
    400,
    'VALIDATION_FAILED',
  )
  assertProblem(await service.admin({ method: 'POST', url: '/admin/accounts/nobody/links' }), 404, 'NOT_FOUND')
  assertProblem(await service.admin({ method: 'POST', url: '/admin/accounts/nobody/shops', payload: { shop: 'a.com' } }), 404, 'NOT_FOUND')
  assertProblem(await service.app.inject({ method: 'POST', url: `/admin/accounts/${bob.accountId}/links` }), 401, 'UNAUTHORIZED')
  assertProblem(
    await service.app.inject({ method: 'GET', url: `/admin/accounts/${bob.accountId}/shops`, headers: { authorization: 'Bearer nope' } }),
    401,
    'UNAUTHORIZED',
  )
})

test('create: a link or shop of another account is a 404, as an unknown one', async () => {
  const aliceLink = await createLink(service, alice.accountId)
  assertProblem(await service.api(bob.apiKey, { method: 'POST', url: '/v2/payments', payload: {} }), 400, 'VALIDATION_FAILED')
  const viaLink = await track(service, bob, { link_id: aliceLink })
  assert.equal(viaLink.status, 404, JSON.stringify(viaLink.body))
  assert.equal(viaLink.body.code, 'NOT_FOUND')
  assert.equal((await track(service, bob, { link_id: 'no-such-link' })).status, 404)
  const viaShop = await track(service, bob, { shop: 'alice.myshopify.com', shopify_payment_id: 'sp-1' })
  assert.equal(viaShop.status, 404, JSON.stringify(viaShop.body))
  assert.equal(viaShop.body.code, 'NOT_FOUND')
  // The owner may.
  assert.equal((await track(service, alice, { link_id: aliceLink })).status, 201)
  assert.equal((await track(service, alice, { shop: 'ALICE.myshopify.com', shopify_payment_id: 'sp-own' })).status, 201)
  // shop and shopify_payment_id go together.
  assert.equal((await track(service, alice, { shop: 'alice.myshopify.com' })).status, 400)
})

test('create: a Shopify payment id is tracked once per account (409), per account only', async () => {
  const first = await track(service, alice, { shop: 'alice.myshopify.com', shopify_payment_id: 'dup-1' })
  assert.equal(first.status, 201)
  const second = await track(service, alice, { shop: 'alice.myshopify.com', shopify_payment_id: 'dup-1' })
  assert.equal(second.status, 409, JSON.stringify(second.body))
  assert.equal(second.body.code, 'CONFLICT')
  // Repeating the very same create stays idempotent.
  const repeat = await service.api(alice.apiKey, { method: 'POST', url: '/v2/payments', payload: first.payload })
  assert.equal(repeat.statusCode, 200, repeat.body)
  assert.equal(repeat.json().secret_id, first.secretId)
  // Another account may use the same Shopify payment id with its own shop.
  await connectShop(service, bob.accountId, 'bob.myshopify.com')
  assert.equal((await track(service, bob, { shop: 'bob.myshopify.com', shopify_payment_id: 'dup-1' })).status, 201)
})

test('Shopify payments: only success is served, in the documented shapes', async () => {
  const paid = await track(service, alice, { shop: 'alice.myshopify.com', shopify_payment_id: 'order-1001', payload: { cart: 'A' } })
  const pending = await track(service, alice, { shop: 'alice.myshopify.com', shopify_payment_id: 'order-1002' })
  const failed = await track(service, alice, { shop: 'alice.myshopify.com', shopify_payment_id: 'order-1003' })
  assert.equal(pending.status, 201)
  await settle(service, alice, paid.secretId, new Date())
  await settle(service, alice, failed.secretId, new Date(), 'failed')

  const full = await get(alice, '/v2/payments/shopify/order-1001')
  assert.equal(full.statusCode, 200, full.body)
  assert.equal(full.json().status, 'success')
  assert.equal(full.json().secret_id, paid.secretId)
  assert.equal(full.json().decimals, 18)
  assert.deepEqual(full.json().payload, { cart: 'A' })

  const summary = await get(alice, '/payments/shopify/order-1001', VERSION)
  assert.equal(summary.statusCode, 200)
  assert.deepEqual(Object.keys(summary.json()).sort(), [
    'after_block',
    'amount',
    'blockchain',
    'commitment',
    'confirmations',
    'confirmed_at',
    'created_at',
    'payload',
    'receiver',
    'sender',
    'token',
    'transaction',
  ])
  const withoutVersion = await get(alice, '/payments/shopify/order-1001')
  assert.equal(withoutVersion.json().secret_id, paid.secretId, 'full record without x-api-version')
  assert.equal(withoutVersion.json().status, 'success')

  for (const id of ['order-1002', 'order-1003', 'order-9999']) {
    assertProblem(await get(alice, `/v2/payments/shopify/${id}`), 404, 'NOT_FOUND')
    assertProblem(await get(alice, `/payments/shopify/${id}`, VERSION), 404, 'NOT_FOUND')
  }
  // Another account's payment looks like an unknown one.
  assertProblem(await get(bob, '/v2/payments/shopify/order-1001'), 404, 'NOT_FOUND')
  assertProblem(await get(bob, '/payments/shopify/order-1001', VERSION), 404, 'NOT_FOUND')
  assertProblem(await get(alice, '/payments/shopify/order-1001', { 'x-api-version': '2030-01' }), 400, 'UNSUPPORTED_API_VERSION')
})

test('a Shopify payment id with slashes (a Shopify gid) is read URL-encoded', async () => {
  const gid = 'gid://shopify/OrderTransaction/5512'
  const paid = await track(service, alice, { shop: 'alice.myshopify.com', shopify_payment_id: gid })
  await settle(service, alice, paid.secretId, new Date())
  const res = await get(alice, `/v2/payments/shopify/${encodeURIComponent(gid)}`)
  assert.equal(res.statusCode, 200, res.body)
  assert.equal(res.json().secret_id, paid.secretId)
})

test('every new endpoint is in the OpenAPI document', async () => {
  const doc = (await service.app.inject({ method: 'GET', url: '/openapi.json' })).json()
  for (const path of [
    '/links/{link_id}/payments',
    '/v2/payments/shopify/{id}',
    '/payments/shopify/{id}',
    '/apps/payments/shopify/{id}',
    '/apps/checkouts/shopify',
    '/admin/accounts/{id}/links',
    '/admin/links/{id}',
    '/admin/accounts/{id}/shops',
    '/admin/accounts/{id}/shops/{shop}',
    '/admin/accounts/{id}/apps',
    '/admin/apps/{id}',
    '/admin/apps/{id}/grants',
    '/admin/grants/{id}',
  ]) {
    assert.ok(doc.paths[path], `${path} documented`)
  }
  const links = doc.paths['/links/{link_id}/payments'].get
  assert.ok(links.parameters.some((p: { name: string }) => p.name === 'after'))
  assert.ok(links.responses['200'] && links.responses['4XX'], 'success and problem responses')
})
