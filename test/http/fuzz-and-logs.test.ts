// No input produces a 5xx, every error is problem+json (docs/api.md §6), and the logs of
// all of it never hold an API key, a secret_id, a callback URL or the admin token in clear.
import assert from 'node:assert/strict'
import { randomBytes, randomUUID } from 'node:crypto'
import { Writable } from 'node:stream'
import { after, before, describe, test } from 'node:test'
import type { FastifyPluginAsync, InjectOptions, LightMyRequestResponse } from 'fastify'
import { createLogger } from '../../src/common/logger.ts'
import { startAnvil, type Anvil } from '../support/index.ts'
import { ADMIN_TOKEN, startTestService, type TestService } from '../support/service.ts'
import { createBody, NATIVE, SENDER, TX_HASH } from './payments-fixtures.ts'

const logLines: string[] = []
const logStream = new Writable({
  write(chunk, _encoding, done) {
    logLines.push(...String(chunk).split('\n').filter(Boolean))
    done()
  },
})

/** A route that fails the way a bug would, to see what an unexpected error logs. */
const boom: FastifyPluginAsync = async (app) => {
  app.get('/test/boom', { schema: { summary: 'throws', tags: ['test'] } }, async () => {
    throw new Error('unexpected failure')
  })
}

let anvil: Anvil
let service: TestService
let apiKey: string
/** Everything that must never appear in a log line. */
const secrets = new Set<string>([ADMIN_TOKEN])

before(async () => {
  anvil = await startAnvil()
  service = await startTestService({
    chains: { ethereum: { rpc: [anvil.rpcUrl], chainId: anvil.chainId } },
    env: { LOG_LEVEL: 'debug', PAYWATCH_RATE_RPS: '1000000', PAYWATCH_RATE_PARALLEL: '1000', PAYWATCH_RATE_DAILY: '100000000' },
    logger: createLogger('debug', logStream),
    background: false,
    app: { apiPlugins: [boom] },
  })
  ;({ apiKey } = await service.newAccount())
  secrets.add(apiKey)
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

/** Problem+json for every error, never a 5xx. */
function assertWellFormed(res: LightMyRequestResponse, request: unknown): void {
  const context = () => `${JSON.stringify(request).slice(0, 600)} → ${res.statusCode} ${res.body.slice(0, 300)}`
  assert.ok(res.statusCode < 500, context())
  if ((request as InjectOptions).method === 'HEAD') return // no body to check
  if (res.statusCode >= 400) {
    assert.match(String(res.headers['content-type']), /^application\/problem\+json/, context())
    let body: Record<string, unknown> = {}
    assert.doesNotThrow(() => (body = JSON.parse(res.body) as Record<string, unknown>), context())
    for (const key of ['type', 'title', 'detail', 'code']) assert.equal(typeof body[key], 'string', `${key}: ${context()}`)
    assert.equal(body.status, res.statusCode, context())
  } else if (res.statusCode !== 204 && !/^text\/html/.test(String(res.headers['content-type']))) {
    // Every API answer is JSON; the home page (GET /) is the one HTML page here.
    assert.doesNotThrow(() => JSON.parse(res.body), context())
  }
}

// A small deterministic PRNG, so that a failing run can be repeated with FUZZ_SEED.
const seed = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31))
let state = seed
const random = (): number => {
  state = (state + 0x6d2b79f5) | 0
  let t = Math.imul(state ^ (state >>> 15), 1 | state)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const int = (n: number) => Math.floor(random() * n)
const pick = <T>(items: readonly T[]): T => items[int(items.length)]!
const chance = (p: number) => random() < p

const strings = [
  '',
  ' ',
  '0',
  '-1',
  '1.5',
  '1e400',
  '0x',
  '0X12',
  'null',
  'true',
  '💸',
  'ä'.repeat(300),
  'a'.repeat(5000),
  '\u0000',
  '\ud800',
  '\u202e',
  '<script>',
  "'; DROP TABLE trackings; --",
  '../../etc/passwd',
  '%00',
  '${jndi}',
  '__proto__',
  'constructor',
  NATIVE,
  NATIVE.toLowerCase(),
  SENDER,
  TX_HASH,
  `0x${'f'.repeat(40)}`,
  `0x${'g'.repeat(40)}`,
  'ethereum',
  'bsc',
  'ETHEREUM',
  'finalized',
  'confirmed',
  'https://x.example/cb',
  'http://127.0.0.1:1/',
  'javascript:alert(1)',
  '18446744073709551616',
  '99999999999999999999999999',
  '0.000000000000000000001',
  '001.100',
  '١٢٣',
  '1_000',
]
const vocabulary = new Set(strings.map((s) => s.toLowerCase()))
function randomValue(depth = 0): unknown {
  switch (int(depth > 2 ? 6 : 9)) {
    case 0:
      return pick(strings)
    case 1:
      return pick([0, -0, 1, -1, 1.5, 2 ** 53, 2 ** 64, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 255, 256])
    case 2:
      return pick([true, false, null])
    case 3:
      return randomBytes(int(40)).toString(pick(['hex', 'base64', 'latin1'] as const))
    case 4:
      return String.fromCodePoint(...Array.from({ length: int(20) }, () => int(0x10ffff + 1)).filter((c) => c < 0xd800 || c > 0xdfff))
    case 5:
      return int(1_000_000)
    case 6:
      return Array.from({ length: int(5) }, () => randomValue(depth + 1))
    case 7:
      return Object.fromEntries(Array.from({ length: int(5) }, () => [pick([...strings, 'a', 'b', 'integration']), randomValue(depth + 1)]))
    default:
      return { nested: randomValue(depth + 1) }
  }
}

/** encodeURIComponent, also for strings it refuses (unpaired surrogates). */
const encode = (value: unknown): string => {
  try {
    return encodeURIComponent(String(value))
  } catch {
    return '%ED%A0%80'
  }
}

const fields = [
  'blockchain',
  'sender',
  'nonce',
  'receiver',
  'token',
  'amount',
  'after_block',
  'secret_id',
  'uuid',
  'callback',
  'transaction',
  'commitment',
  'confirmations',
  'integration_id',
  'payload',
  'forward_to',
  'forward_on_failure',
  'fee_amount',
  'fee_receiver',
  'link_id',
  'shop',
  'shopify_payment_id',
]

function randomBody(): string {
  const body: Record<string, unknown> = createBody()
  for (let i = int(4); i > 0; i--) body[pick(fields)] = randomValue()
  for (let i = int(2); i > 0; i--) delete body[pick(fields)]
  if (chance(0.1)) body[pick(strings)] = randomValue()
  let text = JSON.stringify(chance(0.05) ? randomValue() : body)
  if (chance(0.08))
    text = text.replace(
      /^\{/,
      `{"${pick(['__proto__', 'constructor', 'prototype'])}":${pick(['{"polluted":1}', '{"prototype":{"polluted":1}}', '1'])},`,
    )
  if (chance(0.08)) text = text.slice(0, int(text.length))
  if (chance(0.03)) text = randomBytes(int(200)).toString('latin1')
  if (chance(0.02)) text = `[${text}]`
  return text
}

function randomRequest(): InjectOptions {
  const headers: Record<string, string> = {}
  const key = random()
  if (key < 0.8) headers['x-api-key'] = apiKey
  else if (key < 0.9) headers['x-api-key'] = pick(strings.filter((s) => /^[\x20-\x7e]*$/.test(s)))
  const type = random()
  if (type < 0.75) headers['content-type'] = 'application/json'
  else if (type < 0.9)
    headers['content-type'] = pick([
      'text/plain',
      'application/json; charset=latin1',
      'application/jsonx',
      'application/x-www-form-urlencoded',
      'multipart/form-data',
      '*/*',
      'application/problem+json',
      'APPLICATION/JSON',
      'json',
      ';;;',
    ])
  if (chance(0.2)) headers['x-api-version'] = pick(['2025-10', '2025-11', '', 'v2', '2025-10, 2025-10', ' 2025-10 ', 'x'.repeat(300)])
  if (chance(0.05)) headers.authorization = pick(['Bearer ', `Bearer ${randomUUID()}`, 'Basic x', 'Bearer'])
  const route = random()
  if (route < 0.75) return { method: 'POST', url: '/v2/payments', headers, payload: randomBody() }
  if (route < 0.85) {
    const id = pick([randomUUID(), encode(pick(strings)) || 'x', 'release', 'shopify', '%', '%E0%A4%A', 'a/b/c'])
    return { method: pick(['GET', 'HEAD', 'DELETE', 'POST'] as const), url: `/v2/payments/${id}`, headers }
  }
  if (route < 0.92) {
    headers.authorization = chance(0.7) ? `Bearer ${ADMIN_TOKEN}` : `Bearer ${pick(strings.filter((s) => /^[\x20-\x7e]*$/.test(s)))}`
    const admin = pick([
      { method: 'POST', url: '/admin/accounts', payload: chance(0.5) ? JSON.stringify({ name: randomValue() }) : randomBody() },
      { method: 'POST', url: `/admin/accounts/${encode(randomValue())}/api-keys` },
      { method: 'DELETE', url: `/admin/api-keys/${encode(randomValue())}` },
      { method: 'GET', url: '/admin/accounts' },
    ] as const)
    return { ...admin, headers } as InjectOptions
  }
  return {
    method: pick(['GET', 'POST', 'PUT', 'PATCH', 'OPTIONS', 'DELETE'] as const),
    url: pick([
      '/',
      '/v2',
      '/v2/payments/',
      '/v3/payments',
      '/healthz?x=%00',
      '/readyz',
      '/v2/payments?secret_id=1',
      '/ADMIN/accounts',
      '//v2//payments',
      `/${randomUUID()}`,
    ]),
    headers,
    payload: chance(0.5) ? randomBody() : undefined,
  } as InjectOptions
}

describe('fuzz', () => {
  test(`3,000 random and malformed requests (FUZZ_SEED=${seed}): never a 5xx, errors always problem+json`, async () => {
    const counts = new Map<number, number>()
    for (let batch = 0; batch < 100; batch++) {
      const requests = Array.from({ length: 30 }, randomRequest)
      const responses = await Promise.all(requests.map((request) => service.app.inject(request)))
      responses.forEach((res, i) => {
        assertWellFormed(res, requests[i])
        counts.set(res.statusCode, (counts.get(res.statusCode) ?? 0) + 1)
        if (res.statusCode === 201 && requests[i]!.url === '/v2/payments') {
          const record = res.json<{ secret_id?: string; uuid?: string; callback: string | null }>()
          const secret = String(record.secret_id ?? record.uuid)
          // Only random ones: short ones ("bsc", "1.5") and the fixed vocabulary (addresses, big numbers)
          // also stand in other requests for other fields, which may be logged.
          if (secret.length >= 20 && !vocabulary.has(secret.toLowerCase())) secrets.add(secret)
        }
      })
    }
    // The fuzz reached past validation too: some trackings were created.
    assert.ok((counts.get(201) ?? 0) > 0, JSON.stringify([...counts]))
    assert.ok((counts.get(400) ?? 0) > 1000, JSON.stringify([...counts]))
    assert.equal(({} as Record<string, unknown>).polluted, undefined)
  })

  test('deeply nested JSON is refused or stored, never a crash', async () => {
    for (const depth of [100, 5_000, 30_000]) {
      const nested = `${'['.repeat(depth)}${']'.repeat(depth)}`
      const inPayload = `{"payload":{"a":${nested}}}`
      for (const payload of [nested, inPayload, `{"payload":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`]) {
        const res = await service.api(apiKey, {
          method: 'POST',
          url: '/v2/payments',
          payload,
          headers: { 'content-type': 'application/json' },
        })
        assertWellFormed(res, payload.slice(0, 50))
      }
    }
  })
})

describe('logs', () => {
  test('requests, failures and errors are logged without keys, secret_ids, callback URLs or the admin token', async () => {
    const secret = randomUUID()
    const callback = `https://shop.example/paywatch/${randomUUID()}`
    secrets.add(secret).add(callback)
    const created = await service.api(apiKey, { method: 'POST', url: '/v2/payments', payload: createBody({ secret_id: secret, callback }) })
    assert.equal(created.statusCode, 201)
    assert.equal((await service.api(apiKey, { method: 'GET', url: `/v2/payments/${secret}` })).statusCode, 200)
    assert.equal((await service.api(apiKey, { method: 'GET', url: `/v2/payments/${secret}?x=${secret}` })).statusCode, 200)
    await service.api(apiKey, {
      method: 'POST',
      url: '/v2/payments',
      payload: `{"secret_id":"${secret}",`,
      headers: { 'content-type': 'application/json' },
    })
    await service.api(`${apiKey}-wrong`, { method: 'GET', url: `/v2/payments/${secret}` })
    // A secret_id of a few characters is not logged whole either (nor as its first four).
    for (const short of ['q7Zx', 'k9W', 'Tz4m2']) {
      secrets.add(`/${short}`)
      await service.api(apiKey, { method: 'POST', url: '/v2/payments', payload: createBody({ secret_id: short }) })
      await service.api(apiKey, { method: 'GET', url: `/v2/payments/${short}` })
      await service.api(apiKey, { method: 'GET', url: `/v2/payments/${short}/deliveries` })
    }
    // Paths that are not the canonical route's (404s) are logged without the secret as well.
    for (const url of [
      `//v2/payments/${secret}/deliveries`,
      `/v2//payments/${secret}`,
      `/v2/payments/${secret}/nope`,
      `/V2/payments/${secret}`,
      `/v2/payment/${secret}`,
      `/v2/payments/%2F${secret}`,
      `/x/${secret}?${secret}=${secret}`,
    ]) {
      await service.api(apiKey, { method: 'GET', url })
    }
    const key = (
      await service.admin({ method: 'POST', url: `/admin/accounts/${(await service.newAccount('logs')).accountId}/api-keys` })
    ).json<{ key: string }>().key
    secrets.add(key)
    const failed = await service.api(apiKey, { method: 'GET', url: '/test/boom' })
    assert.equal(failed.statusCode, 500)
    assert.equal(failed.json<{ code: string }>().code, 'INTERNAL_ERROR')
    assert.equal(failed.body.includes('unexpected failure'), false, 'the error itself stays in the log')

    const text = logLines.join('\n')
    assert.ok(
      logLines.some((line) => line.includes('"incoming request"') && line.includes('/v2/payments/')),
      'request lines are logged',
    )
    assert.ok(
      logLines.some((line) => line.includes('unexpected failure')),
      'the unexpected error is logged',
    )
    assert.ok(secrets.size > 5)
    for (const value of secrets) {
      assert.equal(text.includes(value), false, `a log line holds ${value.slice(0, 6)}…: ${logLines.find((l) => l.includes(value))}`)
    }
    // The secret part of the key is also absent from any prefix shown.
    assert.equal(text.includes(apiKey.slice(7)), false)
  })
})
