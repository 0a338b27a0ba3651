// /openapi.json tells the truth about every answer (docs/api.md §8): real answers of every route, successes
// and problems, and the bodies Paywatch sends (a payment callback, a reversal event, the test event) are
// validated against the document's own schemas (JSON Schema 2020-12, Ajv as Fastify ships it). The routes are
// read from the Fastify instance: a route added later is replayed without changing this test.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, test } from 'node:test'
import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { bodyOf } from '../../src/callbacks/pipeline.ts'
import { testEventBody } from '../../src/callbacks/test-event.ts'
import { findTrackingBySecret } from '../../src/store/trackings.ts'
import { startAnvil, type Anvil } from '../support/index.ts'
import { ADMIN_TOKEN, startTestService, type TestService } from '../support/service.ts'
import { createBody, earlierBody } from './payments-fixtures.ts'

let anvil: Anvil
let service: TestService
let doc: any
let ajv: any
before(async () => {
  anvil = await startAnvil()
  service = await startTestService({
    chains: { ethereum: { rpc: [anvil.rpcUrl], chainId: anvil.chainId } },
    env: { PAYWATCH_RATE_RPS: '100000', PAYWATCH_RATE_DAILY: '1000000' },
    background: false,
  })
  doc = (await service.app.inject({ method: 'GET', url: '/openapi.json' })).json()
  ajv = new (Ajv2020 as any)({ strict: false, allErrors: true })
  ;(addFormats as any)(ajv)
  ajv.addSchema({ $id: 'doc', components: doc.components, webhooks: doc.webhooks })
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

/** A schema of the document, its references pointing into it. */
const fromDocument = (schema: unknown): object => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/'))

function validate(schema: unknown, value: unknown, where: string): void {
  const check = ajv.compile(fromDocument(schema))
  assert.ok(check(value), `${where}: ${JSON.stringify(check.errors?.slice(0, 3))}\n${JSON.stringify(value).slice(0, 600)}`)
}

const documentPath = (url: string) => url.replace(/:([A-Za-z_]+)/g, '{$1}')
const checked = new Map<string, Set<number>>()

/** Checks one real answer of a route against the response the document gives for its status and media type. */
function checkAnswer(method: string, url: string, res: LightMyRequestResponse): void {
  const where = `${method} ${url} ${res.statusCode}`
  const operation = doc.paths[documentPath(url)]?.[method.toLowerCase()]
  assert.ok(operation, `${method} ${url} is documented`)
  const status = String(res.statusCode)
  const response = operation.responses[status] ?? operation.responses[`${status[0]}XX`] ?? operation.responses.default
  assert.ok(response, `${where}: the status is documented (${res.body.slice(0, 200)})`)
  if (!response.content) {
    assert.equal(res.body, '', `${where}: documented without a body`)
  } else {
    const mediaType = String(res.headers['content-type'] ?? '').split(';')[0]!
    const content = response.content[mediaType]
    assert.ok(content, `${where}: ${mediaType} is documented (${Object.keys(response.content)})`)
    validate(content.schema, mediaType.endsWith('json') ? res.json() : res.body, where)
  }
  const key = `${method} ${url}`
  checked.set(key, (checked.get(key) ?? new Set()).add(res.statusCode))
}

async function ask(
  method: string,
  url: string,
  options: Partial<InjectOptions> & { route?: string } = {},
): Promise<LightMyRequestResponse> {
  const { route, ...inject } = options
  const res = await service.app.inject({ method: method as 'GET', url, ...inject })
  checkAnswer(method, route ?? url, res)
  return res
}

test('real answers of every route agree with /openapi.json', async () => {
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
  // Accounts, keys, integrations, links, shops, apps and grants, as an operator makes them.
  const account = (await ask('POST', '/admin/accounts', { headers: admin, payload: { name: 'shop' }, route: '/admin/accounts' })).json()
  const other = (await ask('POST', '/admin/accounts', { headers: admin, payload: { name: 'developer' } })).json()
  const key = (
    await ask('POST', `/admin/accounts/${account.id}/api-keys`, { headers: admin, route: '/admin/accounts/:id/api-keys' })
  ).json()
  await ask('POST', `/admin/accounts/${other.id}/api-keys`, { headers: admin, route: '/admin/accounts/:id/api-keys' })
  const integration = (
    await ask('POST', `/admin/accounts/${account.id}/integrations`, {
      headers: admin,
      payload: { name: 'store', reversal_events: true },
      route: '/admin/accounts/:id/integrations',
    })
  ).json()
  const link = (
    await ask('POST', `/admin/accounts/${account.id}/links`, { headers: admin, payload: {}, route: '/admin/accounts/:id/links' })
  ).json()
  await ask('POST', `/admin/accounts/${account.id}/shops`, {
    headers: admin,
    payload: { shop: 'answers.myshopify.com' },
    route: '/admin/accounts/:id/shops',
  })
  const app = (
    await ask('POST', `/admin/accounts/${other.id}/apps`, {
      headers: admin,
      payload: { name: 'reader' },
      route: '/admin/accounts/:id/apps',
    })
  ).json()
  const grant = (
    await ask('POST', `/admin/apps/${app.id}/grants`, {
      headers: admin,
      payload: { account_id: account.id, scopes: ['payments.shopify.read'] },
      route: '/admin/apps/:id/grants',
    })
  ).json()
  await ask('POST', `/admin/accounts/${account.id}/webhook-secret`, { headers: admin, route: '/admin/accounts/:id/webhook-secret' })

  // Payments of both shapes, a link payment and a Shopify payment.
  const api = { 'x-api-key': key.key }
  const current = createBody({
    integration_id: integration.id,
    payload: { order: 1 },
    fee_amount: '0.1',
    fee_receiver: createBody().receiver,
  })
  await ask('POST', '/v2/payments', { headers: api, payload: current })
  await ask('POST', '/v2/payments', { headers: api, payload: current })
  const earlier = earlierBody()
  await ask('POST', '/v2/payments', { headers: api, payload: earlier })
  await ask('POST', '/v2/payments', { headers: api, payload: createBody({ link_id: link.id }) })
  await ask('POST', '/v2/payments', { headers: api, payload: createBody({ shop: 'answers.myshopify.com', shopify_payment_id: 'sp-1' }) })
  await ask('POST', '/v2/payments', { headers: api, payload: { ...current, amount: '2' } })
  await ask('POST', '/v2/payments', { headers: api, payload: { amount: 'x' } })
  for (const secret of [current.secret_id, earlier.uuid, randomUUID()]) {
    await ask('GET', `/v2/payments/${secret}`, { headers: api, route: '/v2/payments/:secret_id' })
    await ask('GET', `/v2/payments/${secret}/deliveries`, { headers: api, route: '/v2/payments/:secret_id/deliveries' })
    await ask('POST', `/v2/payments/${secret}/redeliver`, { headers: api, route: '/v2/payments/:secret_id/redeliver' })
  }
  await ask('POST', '/v2/payments/release', {
    headers: api,
    payload: {
      blockchain: 'ethereum',
      sender: current.sender,
      nonce: current.nonce,
      transaction: `0x${'ab'.repeat(32)}`,
      secret_id: current.secret_id,
    },
  })
  await ask('GET', `/links/${link.id}/payments`, { headers: api, route: '/links/:link_id/payments' })
  await ask('GET', `/links/${link.id}/payments`, { headers: { ...api, 'x-api-version': '2025-10' }, route: '/links/:link_id/payments' })
  await ask('GET', '/payments/shopify/sp-1', { headers: api, route: '/payments/shopify/:id' })
  await ask('GET', '/v2/payments/shopify/sp-1', { headers: api, route: '/v2/payments/shopify/:id' })
  await ask('GET', '/apps/payments/shopify/sp-1', {
    headers: { ...api, authorization: `Bearer ${grant.access_token}`, 'x-api-version': '2025-10' },
    route: '/apps/payments/shopify/:id',
  })
  await ask('GET', '/v2/public-key', { headers: { accept: 'application/json' } })
  await ask('GET', '/v2/public-key')
  await ask('POST', '/v2/endpoints/test', { headers: api, payload: { url: 'https://shop.example/paywatch/callback' } })

  // Then every route of the instance: with the credentials it needs, parameters filled with real ids, an
  // empty JSON body where it takes one. Whatever it answers (a list, a problem) must be documented.
  const ids: Record<string, string> = { secret_id: current.secret_id as string, link_id: link.id, id: account.id }
  const headers = { ...admin, ...api }
  for (const route of service.app.registeredRoutes) {
    if (route.method === 'HEAD' || route.method === 'OPTIONS') continue
    const hidden = ['/openapi.json', '/docs', '/dashboard', '/cable', '/'].some(
      (prefix) => route.url === prefix || route.url.startsWith(`${prefix}/`),
    )
    if (hidden || route.url === '/') continue
    const url = route.url.replace(/:([A-Za-z_]+)/g, (_, name: string) => ids[name] ?? 'unknown')
    const takesBody = ['POST', 'PUT', 'PATCH'].includes(route.method)
    await ask(route.method, url, { headers, ...(takesBody ? { payload: {} } : {}), route: route.url })
  }
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const method of Object.keys(item)) {
      if (path === '/cable') continue
      const url = path.replace(/\{([A-Za-z_]+)\}/g, ':$1')
      assert.ok(checked.has(`${method.toUpperCase()} ${url}`), `${method} ${path} was replayed`)
    }
  }
  // The records, created and read, were answered with success.
  assert.ok(checked.get('POST /v2/payments')!.has(201))
  assert.ok(checked.get('GET /v2/payments/:secret_id')!.has(200))
  assert.ok(checked.get('GET /links/:link_id/payments')!.has(200))
  assert.ok(checked.get('GET /v2/payments/:secret_id')!.has(404))
  assert.ok(checked.get('POST /admin/apps/:id/grants')!.has(201))
})

test('the callback, a reversal event and the test event agree with the webhooks of /openapi.json', async () => {
  const { apiKey, accountId } = await service.newAccount()
  const body = createBody()
  await service.api(apiKey, { method: 'POST', url: '/v2/payments', payload: body })
  const tracking = await findTrackingBySecret(service.database.db, accountId, body.secret_id as string)
  assert.ok(tracking)
  const reverted = { ...tracking, status: 'success' as const, confirmedAt: new Date(), revertedEver: true, revertedAt: new Date() }
  const bodySchema = (name: string) => doc.webhooks[name].post.requestBody.content['application/json'].schema
  validate(
    bodySchema('paymentCompleted'),
    JSON.parse(bodyOf({ tracking: { ...tracking, status: 'failed', failedReason: 'AMOUNT_MISMATCH' } })),
    'callback',
  )
  validate(bodySchema('paymentCompleted'), JSON.parse(bodyOf({ tracking: { ...tracking, shape: 'earlier' } })), 'earlier callback')
  validate(bodySchema('payment.reverted'), JSON.parse(bodyOf({ tracking: reverted, event: 'payment.reverted' })), 'reversal event')
  validate(
    bodySchema('payment.reconfirmed'),
    JSON.parse(bodyOf({ tracking: { ...reverted, revertedAt: null }, event: 'payment.reconfirmed' })),
    'reconfirmed',
  )
  validate(bodySchema('test'), JSON.parse(testEventBody(new Date())), 'test event')
  // A field the table does not send is refused by the schema: the document cannot drift from the answers.
  const check = ajv.compile(fromDocument(bodySchema('paymentCompleted')))
  assert.equal(check({ ...JSON.parse(bodyOf({ tracking })), surprise: 1 }), false)
})

test('every shared schema and every webhook body carries an example, and the example agrees with its schema', () => {
  for (const [name, schema] of Object.entries(doc.components.schemas as Record<string, { examples?: unknown[] }>)) {
    assert.ok(schema.examples?.length, `components.schemas.${name} has an example`)
    for (const example of schema.examples!) validate({ $ref: `#/components/schemas/${name}` }, example, `${name}'s example`)
  }
  for (const [name, webhook] of Object.entries(doc.webhooks as Record<string, any>)) {
    const { schema } = webhook.post.requestBody.content['application/json']
    const examples = schema.examples ?? (schema.$ref ? doc.components.schemas[schema.$ref.split('/').at(-1)].examples : undefined)
    const named = schema.anyOf?.flatMap((ref: { $ref: string }) => doc.components.schemas[ref.$ref.split('/').at(-1)!].examples ?? [])
    assert.ok((examples ?? named)?.length, `webhook ${name} has an example body`)
  }
})
