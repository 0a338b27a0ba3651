// /openapi.json is complete (docs/api.md §7): a standard OpenAPI linter (Redocly, recommended rules) finds no
// error in it, and every warning left is one of the justified ones below; the callback, the signature
// header, operationIds and problem media types are there; /docs carries Paywatch's name.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { BaseResolver, createConfig, lintDocument, makeDocumentFromString } from '@redocly/openapi-core'
import { startTestService, type TestService } from '../support/service.ts'

/**
 * Warnings kept, each for a reason:
 * - no-ambiguous-paths: `/v2/payments/shopify/{id}` and `/v2/payments/{secret_id}/deliveries|redeliver` both
 *   match `/v2/payments/shopify/deliveries`. Both paths are the public API's and cannot move; the router takes
 *   the literal segment first, so `shopify/…` always reaches the Shopify route (a secret_id is never "shopify").
 * - operation-2xx-response on GET /cable: a WebSocket handshake answers 101 Switching Protocols, never 2xx.
 */
const JUSTIFIED = [
  { rule: 'no-ambiguous-paths', pointer: /^#\/paths\/~1v2~1payments~1\{secret_id\}~1(deliveries|redeliver)$/ },
  { rule: 'operation-2xx-response', pointer: /^#\/paths\/~1cable\/get\/responses$/ },
]

let service: TestService
let doc: any
before(async () => {
  service = await startTestService()
  doc = (await service.app.inject({ method: 'GET', url: '/openapi.json' })).json()
})
after(async () => service?.close())

test('Redocly recommended rules: no error, and only the justified warnings', async () => {
  const config = await createConfig({ extends: ['recommended'] })
  const document = makeDocumentFromString(JSON.stringify(doc), '/openapi.json')
  const problems = await lintDocument({ document, config: (config as any).styleguide ?? config, externalRefResolver: new BaseResolver() })
  const described = problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`)
  assert.deepEqual(
    problems.filter((p) => p.severity === 'error'),
    [],
    described.join('\n'),
  )
  const unjustified = problems.filter(
    (p) => !JUSTIFIED.some((kept) => kept.rule === p.ruleId && kept.pointer.test(p.location[0]?.pointer ?? '')),
  )
  assert.deepEqual(
    unjustified.map((p) => `${p.ruleId} ${p.location[0]?.pointer}`),
    [],
    described.join('\n'),
  )
})

test('operationIds, servers, problem media types, 201/204, the callback and x-signature are documented', () => {
  assert.equal(doc.openapi, '3.1.0')
  assert.ok(doc.servers?.length)
  const ids = new Set<string>()
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, operation] of Object.entries<any>(item)) {
      assert.ok(operation.operationId, `${method} ${path} has an operationId`)
      assert.ok(!ids.has(operation.operationId), `${operation.operationId} is unique`)
      ids.add(operation.operationId)
      for (const [status, response] of Object.entries<any>(operation.responses)) {
        if (/^[45]/.test(status) && !(path === '/readyz' && status === '503')) {
          assert.deepEqual(Object.keys(response.content ?? {}), ['application/problem+json'], `${method} ${path} ${status}`)
        }
      }
      if (method === 'delete') assert.ok(operation.responses['204'], `${path} DELETE answers 204`)
    }
  }
  // Every component is referred to, and the problem body is described once.
  const text = JSON.stringify(doc.paths)
  for (const name of Object.keys(doc.components.schemas)) {
    assert.ok(text.includes(`"#/components/schemas/${name}"`) || JSON.stringify(doc.webhooks).includes(`/${name}"`), `${name} is used`)
  }
  assert.ok(!text.includes('"urn:paywatch:problem'), 'no problem schema is inlined')
  for (const name of ['paymentCompleted', 'payment.reverted', 'payment.reconfirmed', 'test']) {
    assert.ok(doc.webhooks[name]?.post?.requestBody, `webhook ${name} is documented`)
  }
  const created = doc.paths['/admin/accounts'].post.responses['201']
  assert.deepEqual(Object.keys(created.content['application/json'].schema.properties).sort(), ['created_at', 'id', 'name'])
  assert.ok(doc.paths['/admin/accounts/{id}/api-keys'].post.responses['201'].content['application/json'].schema.properties.key)

  const create = doc.paths['/v2/payments'].post
  const callback = create.callbacks.paymentCompleted['{$request.body#/callback}'].post
  const headers = callback.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)
  for (const name of ['x-signature', 'x-delivery-id', 'webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    assert.ok(headers.includes(`header:${name}`), `the callback documents ${name}`)
  }
  assert.deepEqual(callback.requestBody.content['application/json'].schema.anyOf, [
    { $ref: '#/components/schemas/PaymentRecord' },
    { $ref: '#/components/schemas/EarlierPaymentRecord' },
  ])
  assert.ok(doc.components.schemas.PaymentRecord.properties.secret_id)
  assert.ok(doc.components.schemas.PaymentRecord.properties.reverted_at)
  assert.ok(doc.components.schemas.PaymentRecord.properties.deadline)
  assert.ok(doc.paths['/v2/payments/{secret_id}'].get.responses['200'].headers['x-signature'])
  assert.equal(doc.paths['/v2/payments/{secret_id}'].get.operationId, 'getPayment')
})

test('/docs is titled Paywatch, with its own logo text', async () => {
  const page = await service.app.inject({ method: 'GET', url: '/docs/' })
  assert.equal(page.statusCode, 200)
  assert.match(page.body, /<title>Paywatch API<\/title>/)
  // The page's script swaps the stock logo for ours, a data: URL.
  const script = await service.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' })
  const logo = /data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)/.exec(script.body)
  assert.ok(logo, 'the page carries its own logo')
  assert.match(Buffer.from(logo[1]!, 'base64').toString(), />Paywatch</)
})
