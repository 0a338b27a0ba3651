// The operator's HTTP surface: admin API (docs/api.md §6), /healthz, /readyz, /metrics,
// /openapi.json, /docs offline, and problem+json everywhere. The chain is stopped last: /readyz
// and creates that need the chain then answer 503.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { manualClock } from '../support/clock.ts'
import { startAnvil, type Anvil } from '../support/index.ts'
import { ADMIN_TOKEN, startTestService, type TestService } from '../support/service.ts'
import { assertFieldError, assertProblem, createBody } from './payments-fixtures.ts'

let anvil: Anvil
let service: TestService
const clock = manualClock(new Date())

before(async () => {
  anvil = await startAnvil()
  service = await startTestService({
    chains: { ethereum: { rpc: [anvil.rpcUrl], chainId: anvil.chainId, rpcTimeoutMs: 1_000 } },
    env: { PAYWATCH_RATE_RPS: '100000', PAYWATCH_RATE_DAILY: '1000000' },
    background: false,
    clock,
  })
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

describe('admin API', () => {
  test('without the bearer token, or with a wrong one → 401', async () => {
    const attempts = [
      {},
      { authorization: 'Bearer wrong-token' },
      { authorization: `Bearer ${ADMIN_TOKEN}x` },
      { authorization: ADMIN_TOKEN },
      { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}` },
    ]
    for (const headers of attempts) {
      assertProblem(
        await service.app.inject({ method: 'POST', url: '/admin/accounts', payload: { name: 'x' }, headers }),
        401,
        'UNAUTHORIZED',
      )
      assertProblem(await service.app.inject({ method: 'GET', url: '/admin/accounts', headers }), 401, 'UNAUTHORIZED')
    }
  })

  test('accounts and keys: create, list without the key, revoke → the key is refused at once', async () => {
    const created = await service.admin({ method: 'POST', url: '/admin/accounts', payload: { name: '  Shop One ' } })
    assert.equal(created.statusCode, 201, created.body)
    const account = created.json<{ id: string; name: string; created_at: string }>()
    assert.equal(account.name, 'Shop One')
    assert.match(account.id, /^[0-9a-f-]{36}$/)

    const keyRes = await service.admin({
      method: 'POST',
      url: `/admin/accounts/${account.id}/api-keys`,
      headers: { 'content-type': 'application/json' },
    })
    assert.equal(keyRes.statusCode, 201, keyRes.body)
    const key = keyRes.json<{ id: string; key: string }>()
    assert.ok(key.key.length >= 30)

    const listed = await service.admin({ method: 'GET', url: `/admin/accounts/${account.id}/api-keys` })
    assert.equal(listed.statusCode, 200)
    assert.equal(listed.body.includes(key.key), false)
    assert.deepEqual(
      listed.json<{ id: string; revoked_at: null }[]>().map((k) => [k.id, k.revoked_at]),
      [[key.id, null]],
    )

    const accounts = await service.admin({ method: 'GET', url: '/admin/accounts' })
    assert.ok(accounts.json<{ id: string }[]>().some((a) => a.id === account.id))

    const ok = await service.api(key.key, { method: 'POST', url: '/v2/payments', payload: createBody() })
    assert.equal(ok.statusCode, 201, ok.body)

    // Clients send Content-Type: application/json on every request, DELETE included.
    const revoked = await service.admin({
      method: 'DELETE',
      url: `/admin/api-keys/${key.id}`,
      headers: { 'content-type': 'application/json' },
    })
    assert.equal(revoked.statusCode, 204, revoked.body)
    assertProblem(await service.api(key.key, { method: 'POST', url: '/v2/payments', payload: createBody() }), 401, 'UNAUTHORIZED')
    const after = await service.admin({ method: 'GET', url: `/admin/accounts/${account.id}/api-keys` })
    assert.notEqual(after.json<{ revoked_at: string | null }[]>()[0]!.revoked_at, null)
  })

  test('admin validation and unknown ids', async () => {
    assertFieldError(await service.admin({ method: 'POST', url: '/admin/accounts', payload: {} }), 'name')
    assertFieldError(await service.admin({ method: 'POST', url: '/admin/accounts', payload: { name: '   ' } }), 'name')
    assertFieldError(await service.admin({ method: 'POST', url: '/admin/accounts', payload: { name: 5 } }), 'name')
    assertFieldError(
      await service.admin({ method: 'POST', url: '/admin/accounts', payload: '[1]', headers: { 'content-type': 'application/json' } }),
      '',
    )
    assertProblem(await service.admin({ method: 'POST', url: '/admin/accounts/no-such-account/api-keys' }), 404, 'NOT_FOUND')
    assertProblem(await service.admin({ method: 'GET', url: '/admin/accounts/no-such-account/api-keys' }), 404, 'NOT_FOUND')
    assertProblem(await service.admin({ method: 'DELETE', url: '/admin/api-keys/no-such-key' }), 404, 'NOT_FOUND')
    assertProblem(await service.admin({ method: 'DELETE', url: '/admin/api-keys/a%00b' }), 400, 'BAD_URL')
  })

  test('without PAYWATCH_ADMIN_TOKEN the admin API does not exist (404)', async () => {
    const bare = await startTestService({ env: { PAYWATCH_ADMIN_TOKEN: '' }, background: false })
    try {
      for (const [method, url] of [
        ['POST', '/admin/accounts'],
        ['GET', '/admin/accounts'],
        ['DELETE', '/admin/api-keys/x'],
      ] as const) {
        assertProblem(await bare.app.inject({ method, url, headers: { authorization: 'Bearer ' } }), 404, 'NOT_FOUND')
        assertProblem(await bare.admin({ method, url }), 404, 'NOT_FOUND')
      }
    } finally {
      await bare.close()
    }
  })
})

describe('operations endpoints', () => {
  test('/healthz answers without a key', async () => {
    const res = await service.app.inject({ method: 'GET', url: '/healthz' })
    assert.equal(res.statusCode, 200)
    assert.deepEqual(res.json(), { status: 'ok' })
  })

  test('/readyz: 200 with the database and the chain reachable', async () => {
    const res = await service.app.inject({ method: 'GET', url: '/readyz' })
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json<{ status: string; database: { ok: boolean }; chains: { name: string; ok: boolean; head: string }[] }>()
    assert.equal(body.database.ok, true)
    assert.deepEqual(
      body.chains.map((c) => [c.name, c.ok]),
      [['ethereum', true]],
    )
    assert.match(body.chains[0]!.head, /^\d+$/)
  })

  test('/metrics: Prometheus text with request counters and process metrics', async () => {
    await service.app.inject({ method: 'GET', url: '/healthz' })
    const res = await service.app.inject({ method: 'GET', url: '/metrics' })
    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/)
    assert.match(res.body, /^# HELP paywatch_http_requests_total /m)
    assert.match(res.body, /^paywatch_http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/m)
    assert.match(res.body, /^paywatch_http_request_duration_seconds_bucket\{/m)
    assert.match(res.body, /^process_cpu_user_seconds_total /m)
  })

  test('/openapi.json: an OpenAPI 3 document with the payments paths, every route summarised and tagged', async () => {
    const res = await service.app.inject({ method: 'GET', url: '/openapi.json' })
    assert.equal(res.statusCode, 200)
    const doc = res.json<OpenApi>()
    assert.match(doc.openapi, /^3\.\d+\.\d+$/)
    assert.equal(typeof doc.info.title, 'string')
    assert.equal(typeof doc.info.version, 'string')
    assert.ok(doc.paths['/v2/payments']?.post, 'POST /v2/payments')
    assert.ok(doc.paths['/v2/payments/{secret_id}']?.get, 'GET /v2/payments/{secret_id}')
    assert.ok(doc.components?.securitySchemes?.apiKey)
    const create = doc.paths['/v2/payments']!.post!
    const body = (
      create.requestBody as { content: Record<string, { schema: { properties: Record<string, unknown>; required: string[] } }> }
    ).content['application/json']!.schema
    for (const field of ['blockchain', 'receiver', 'token', 'amount', 'after_block']) {
      assert.ok(body.properties[field], `request body documents ${field}`)
      assert.ok(body.required.includes(field), `${field} required`)
    }
    // Payments without a nonce (docs/api.md): nonce optional, sender required only with it, a deadline.
    for (const field of ['sender', 'nonce', 'deadline']) {
      assert.ok(body.properties[field], `request body documents ${field}`)
      assert.ok(!body.required.includes(field), `${field} optional`)
    }
    assert.ok(create.responses['201'] && create.responses['200'])
    const methods = ['get', 'post', 'put', 'patch', 'delete'] as const
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of methods) {
        const operation = item[method]
        if (!operation) continue
        assert.ok(operation.summary, `${method.toUpperCase()} ${path} has a summary`)
        assert.ok(operation.tags?.length, `${method.toUpperCase()} ${path} has tags`)
        assert.ok(operation.responses && Object.keys(operation.responses).length > 0, `${method.toUpperCase()} ${path} has responses`)
        for (const name of path.match(/\{[^}]+\}/g) ?? []) {
          assert.ok(
            operation.parameters?.some((p) => p.in === 'path' && `{${p.name}}` === name),
            `${path}: ${name} declared`,
          )
        }
      }
    }
    for (const ref of JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? []) {
      const pointer = ref.slice(8, -1)
      assert.ok(pointer.startsWith('#/'), `local $ref ${pointer}`)
      let node: unknown = doc
      for (const part of pointer.slice(2).split('/')) node = (node as Record<string, unknown> | undefined)?.[part]
      assert.ok(node, `$ref ${pointer} resolves`)
    }
  })

  test('/docs: HTML and every asset it loads are served locally', async () => {
    const page = await service.app.inject({ method: 'GET', url: '/docs' })
    assert.equal(page.statusCode, 200)
    assert.match(String(page.headers['content-type']), /^text\/html/)
    const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)
    assert.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), page.body)
    for (const asset of assets) {
      assert.ok(!/^(https?:)?\/\//.test(asset), `${asset} is not from a CDN`)
      const res = await service.app.inject({ method: 'GET', url: new URL(asset, 'http://localhost/docs/').pathname })
      assert.equal(res.statusCode, 200, asset)
      assert.ok(res.rawPayload.length > 0, asset)
    }
    const initializer = await service.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' })
    const specUrl = /\burl: (?:resolveUrl\()?['"]([^'"]+)['"]/.exec(initializer.body)?.[1]
    assert.ok(specUrl, initializer.body)
    const spec = await service.app.inject({ method: 'GET', url: new URL(specUrl, 'http://localhost/docs/').pathname })
    assert.equal(spec.statusCode, 200)
    assert.ok(spec.json<OpenApi>().paths['/v2/payments'])
  })
})

describe('with the chain RPC down', () => {
  test('/readyz → 503 naming the chain; a create that needs the chain → 503 CHAIN_UNAVAILABLE with Retry-After', async () => {
    const { apiKey } = await service.newAccount('rpc down')
    await anvil.stop()
    clock.advance(10_000) // past the readiness cache
    const res = await service.app.inject({ method: 'GET', url: '/readyz' })
    assert.equal(res.statusCode, 503, res.body)
    const body = res.json<{ status: string; database: { ok: boolean }; chains: { name: string; ok: boolean; error?: string }[] }>()
    assert.equal(body.database.ok, true)
    assert.equal(body.chains[0]!.name, 'ethereum')
    assert.equal(body.chains[0]!.ok, false)
    assert.ok(body.chains[0]!.error)

    // The native token needs no RPC; an ERC-20 whose decimals are not cached does.
    const native = await service.api(apiKey, { method: 'POST', url: '/v2/payments', payload: createBody() })
    assert.equal(native.statusCode, 201, native.body)
    const token = await service.api(apiKey, {
      method: 'POST',
      url: '/v2/payments',
      payload: createBody({ token: '0x00000000000000000000000000000000000000aa' }),
    })
    assertProblem(token, 503, 'CHAIN_UNAVAILABLE')
    assert.ok(Number(token.headers['retry-after']) > 0)
  })
})

interface OpenApiOperation {
  summary?: string
  tags?: string[]
  parameters?: { in: string; name: string }[]
  requestBody?: unknown
  responses: Record<string, unknown>
}
interface OpenApi {
  openapi: string
  info: { title: string; version: string }
  paths: Record<string, Partial<Record<'get' | 'post' | 'put' | 'patch' | 'delete', OpenApiOperation>>>
  components?: { securitySchemes?: Record<string, unknown> }
}
