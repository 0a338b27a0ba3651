// Per-key limits (docs/api.md §6): requests per second, in flight
// and per day, with Retry-After and RateLimit-* headers; shared by two nodes through Redis.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { FastifyPluginAsync, LightMyRequestResponse } from 'fastify'
import { startTestService, type TestService } from '../support/service.ts'
import { assertProblem } from './payments-fixtures.ts'

/** A route that holds its request until the test opens the gate: requests in flight on demand. */
function createGate() {
  let open!: () => void
  let opened = new Promise<void>((resolve) => (open = resolve))
  const gate = {
    entered: 0,
    open: () => open(),
    reset() {
      gate.entered = 0
      opened = new Promise<void>((resolve) => (open = resolve))
    },
    plugin: (async (app) => {
      app.get('/test/slow', { schema: { summary: 'held until the test opens the gate', tags: ['test'] } }, async () => {
        gate.entered++
        await opened
        return { ok: true }
      })
    }) as FastifyPluginAsync,
    /** Resolves once `n` requests are inside the route (no sleeping: yields to the event loop). */
    async until(n: number) {
      for (let i = 0; gate.entered < n; i++) {
        if (i > 100_000) throw new Error(`only ${gate.entered} of ${n} requests entered the slow route`)
        await new Promise((resolve) => setImmediate(resolve))
      }
    },
  }
  return gate
}

const ping = (service: TestService, apiKey: string) => service.api(apiKey, { method: 'GET', url: '/v2/payments/not-there' })

function assertLimited(res: LightMyRequestResponse, limit: number): void {
  const problem = assertProblem(res, 429, 'RATE_LIMITED')
  assert.match(problem.detail, /limit/)
  const retryAfter = Number(res.headers['retry-after'])
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After ${res.headers['retry-after']}`)
  assert.equal(res.headers['ratelimit-limit'], String(limit))
  assert.equal(res.headers['ratelimit-remaining'], '0')
  assert.ok(Number(res.headers['ratelimit-reset']) >= 1)
}

describe('one node', () => {
  let defaults: TestService // the documented defaults: 10/s, 10 in flight, 14,400 a day
  let tuned: TestService // high per-second limit, a small daily one
  const gate = createGate()
  before(async () => {
    ;[defaults, tuned] = await Promise.all([
      startTestService({ background: false }),
      startTestService({
        background: false,
        env: { PAYWATCH_RATE_RPS: '100000', PAYWATCH_RATE_DAILY: '25' },
        app: { apiPlugins: [gate.plugin] },
      }),
    ])
  })
  after(async () => {
    gate.open()
    await Promise.all([defaults?.close(), tuned?.close()])
  })

  test('the 11th request within one second → 429 with Retry-After and RateLimit-* headers', async () => {
    // The limiter counts real time: on a very loaded machine eleven requests may straddle a second,
    // so a round that took too long is repeated with a fresh key.
    for (let round = 1; ; round++) {
      const { apiKey } = await defaults.newAccount(`rps ${round}`)
      await ping(defaults, apiKey) // warms the key's authentication; the budget starts here
      const started = performance.now()
      const responses: LightMyRequestResponse[] = []
      for (let i = 0; i < 10; i++) responses.push(await ping(defaults, apiKey))
      const elapsed = performance.now() - started
      if (elapsed > 700 && round < 5) continue
      assert.ok(elapsed <= 700, `ten requests took ${elapsed} ms in every round`)
      const codes = responses.map((r) => r.statusCode)
      assert.deepEqual(codes, [...Array<number>(9).fill(404), 429])
      assert.deepEqual(
        responses.slice(0, 9).map((r) => r.headers['ratelimit-remaining']),
        ['8', '7', '6', '5', '4', '3', '2', '1', '0'],
      )
      for (const res of responses.slice(0, 9)) assert.equal(res.headers['ratelimit-limit'], '10')
      assertLimited(responses[9]!, 10)
      assert.equal(responses[9]!.headers['retry-after'], '1')
      // Another key has its own budget.
      const other = await defaults.newAccount(`rps other ${round}`)
      assert.equal((await ping(defaults, other.apiKey)).statusCode, 404)
      return
    }
  })

  test('the 11th request in flight → 429 at once; the slots are free again when the ten finish', async () => {
    const { apiKey } = await tuned.newAccount('parallel')
    gate.reset()
    const held = Array.from({ length: 10 }, () => tuned.api(apiKey, { method: 'GET', url: '/test/slow' }))
    await gate.until(10)
    const eleventh = await tuned.api(apiKey, { method: 'GET', url: '/test/slow' })
    assertLimited(eleventh, 10)
    assert.match(eleventh.json<{ detail: string }>().detail, /parallel/)
    assert.equal(gate.entered, 10)
    // Another key is not affected.
    const other = await tuned.newAccount('parallel other')
    assert.equal((await ping(tuned, other.apiKey)).statusCode, 404)

    gate.open()
    assert.deepEqual(
      (await Promise.all(held)).map((r) => r.statusCode),
      Array<number>(10).fill(200),
    )
    assert.equal((await ping(tuned, apiKey)).statusCode, 404)
  })

  test('the daily budget: request 26 of a 25-a-day key → 429 with a Retry-After of about a day', async () => {
    const { apiKey } = await tuned.newAccount('daily')
    const responses = await Promise.all(Array.from({ length: 5 }, () => ping(tuned, apiKey)))
    for (let i = 0; i < 20; i++) responses.push(await ping(tuned, apiKey))
    assert.deepEqual(
      responses.map((r) => r.statusCode),
      Array<number>(25).fill(404),
    )
    // Near the end of the day's budget the headers describe it rather than the per-second window.
    assert.deepEqual(
      responses.slice(-3).map((r) => [r.headers['ratelimit-limit'], r.headers['ratelimit-remaining']]),
      [
        ['25', '2'],
        ['25', '1'],
        ['25', '0'],
      ],
    )
    assert.ok(Number(responses[24]!.headers['ratelimit-reset']) > 86_000)
    const refused = await ping(tuned, apiKey)
    const problem = assertProblem(refused, 429, 'RATE_LIMITED')
    assert.match(problem.detail, /day/)
    assert.ok(Number(refused.headers['retry-after']) > 86_000, `Retry-After ${refused.headers['retry-after']}`)
    assert.equal(refused.headers['ratelimit-limit'], '25')
    assert.equal(refused.headers['ratelimit-remaining'], '0')
  })

  test('requests refused before the limits (unsupported x-api-version) do not use the budget', async () => {
    const { apiKey } = await tuned.newAccount('refused early')
    for (let i = 0; i < 30; i++) {
      const res = await tuned.api(apiKey, { method: 'GET', url: '/v2/payments/x', headers: { 'x-api-version': '1999-01' } })
      assert.equal(res.statusCode, 400)
    }
    assert.equal((await ping(tuned, apiKey)).statusCode, 404) // 30 > the daily 25, yet not limited
  })
})

const redisUrl = process.env.REDIS_URL
const redisSkip = redisUrl ? false : 'REDIS_URL is not set: the shared-budget tests need a Redis server (CI sets it)'

describe('two nodes sharing one Redis', { skip: redisSkip }, () => {
  let first: TestService
  let second: TestService
  let apiKey: string
  let keyId: string
  const gates = [createGate(), createGate()]
  before(async () => {
    const env = { REDIS_URL: redisUrl!, PAYWATCH_RATE_RPS: '100000', PAYWATCH_RATE_PARALLEL: '10', PAYWATCH_RATE_DAILY: '30' }
    const start = (gate: ReturnType<typeof createGate>) => startTestService({ background: false, env, app: { apiPlugins: [gate.plugin] } })
    ;[first, second] = await Promise.all([start(gates[0]!), start(gates[1]!)])
    // Both nodes know the same key, as nodes sharing one database do.
    const { accountId, apiKey: key } = await first.newAccount('shared')
    apiKey = key
    const account = await first.database.db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirstOrThrow()
    const keyRow = await first.database.db.selectFrom('api_keys').selectAll().where('account_id', '=', accountId).executeTakeFirstOrThrow()
    keyId = keyRow.id
    await second.database.db.insertInto('accounts').values(account).execute()
    await second.database.db.insertInto('api_keys').values(keyRow).execute()
    await Promise.all([first, second].map((node) => waitForRedis(node)))
  })
  after(async () => {
    for (const gate of gates) gate.open()
    if (first?.redis) await first.redis.del(`paywatch:rps:${keyId}`, `paywatch:daily:${keyId}`, `paywatch:inflight:${keyId}`)
    await Promise.all([first?.close(), second?.close()])
  })

  test('requests in flight on both nodes count against one budget of 10', async () => {
    gates.forEach((gate) => gate.reset())
    const held = [
      ...Array.from({ length: 6 }, () => first.api(apiKey, { method: 'GET', url: '/test/slow' })),
      ...Array.from({ length: 4 }, () => second.api(apiKey, { method: 'GET', url: '/test/slow' })),
    ]
    await gates[0]!.until(6)
    await gates[1]!.until(4)
    assertLimited(await second.api(apiKey, { method: 'GET', url: '/test/slow' }), 10)
    assertLimited(await first.api(apiKey, { method: 'GET', url: '/test/slow' }), 10)
    for (const gate of gates) gate.open()
    assert.deepEqual(
      (await Promise.all(held)).map((r) => r.statusCode),
      Array<number>(10).fill(200),
    )
    // Freed on both nodes.
    assert.equal((await ping(second, apiKey)).statusCode, 404)
  })

  test('the daily budget is shared: what one node used, the other cannot', async () => {
    // 10 held + 2 refused + 1 ping were counted above (refusals still count), so 30 - 13 = 17 remain.
    const used: LightMyRequestResponse[] = []
    for (let i = 0; i < 17; i++) used.push(await ping(i % 2 ? second : first, apiKey))
    assert.deepEqual(
      used.map((r) => r.statusCode),
      Array<number>(17).fill(404),
    )
    const refused = await ping(second, apiKey)
    assertProblem(refused, 429, 'RATE_LIMITED')
    assert.equal(refused.headers['ratelimit-limit'], '30')
    assertProblem(await ping(first, apiKey), 429, 'RATE_LIMITED')
  })
})

async function waitForRedis(service: TestService): Promise<void> {
  const redis = service.redis
  assert.ok(redis, 'the service was configured with REDIS_URL')
  if (redis.status === 'ready') return
  await new Promise<void>((resolve, reject) => {
    redis.once('ready', resolve)
    redis.once('end', () => reject(new Error('Redis connection ended')))
  })
}
