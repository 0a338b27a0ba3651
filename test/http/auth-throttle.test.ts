// Failed authentication is throttled per client address (shared through Redis when REDIS_URL is set), and
// an address over the limit costs no database lookup: a key-guessing client gets 429s, not a query each.
import assert from 'node:assert/strict'
import { randomBytes, randomInt } from 'node:crypto'
import { after, before, test } from 'node:test'
import type { InjectOptions } from 'fastify'
import { ADMIN_TOKEN, startTestService, type TestService } from '../support/service.ts'

const LIMIT = 10
/** Both services of the cross-node test share the Redis named by the test run's REDIS_URL. */
const redisEnv: Record<string, string> = process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}
const keyLookups: string[] = []
let service: TestService
before(async () => {
  service = await startTestService({
    env: { PAYWATCH_AUTH_FAILURES: String(LIMIT), ...redisEnv },
    background: false,
    onQuery: (sql) => void (/from "api_keys"/.test(sql) && keyLookups.push(sql)),
  })
})
after(async () => {
  await service?.close()
})

/** A client address of its own for each test: counters in a shared Redis outlive one run. */
const newAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`
const randomKey = () => `pw_${randomBytes(24).toString('base64url')}`
const from = (address: string, key: string, options: InjectOptions = { method: 'GET', url: '/v2/payments/none' }) =>
  service.app.inject({ ...options, remoteAddress: address, headers: { 'x-api-key': key, ...options.headers } })

test('unknown keys from one address: 401 up to the limit, then 429 with Retry-After and no database lookup', async () => {
  const address = newAddress()
  const before = keyLookups.length
  const statuses: number[] = []
  for (let i = 0; i < 40; i++) {
    const res = await from(address, randomKey())
    statuses.push(res.statusCode)
    if (res.statusCode === 429) {
      assert.match(String(res.headers['content-type']), /application\/problem\+json/)
      assert.equal(res.json().code, 'RATE_LIMITED')
      assert.ok(Number(res.headers['retry-after']) >= 1, 'Retry-After')
    }
  }
  assert.deepEqual(statuses, [...Array(LIMIT).fill(401), ...Array(40 - LIMIT).fill(429)])
  assert.ok(keyLookups.length - before <= LIMIT, `${keyLookups.length - before} key lookups for 40 attempts`)
  // The address is refused as a whole, a valid key included; other addresses are not affected.
  const { apiKey } = await service.newAccount()
  assert.equal((await from(address, apiKey)).statusCode, 429)
  assert.equal((await from(newAddress(), apiKey)).statusCode, 404)
})

test('the same unknown key is looked up in the database once', async () => {
  const address = newAddress()
  const key = randomKey()
  const before = keyLookups.length
  for (let i = 0; i < 5; i++) assert.equal((await from(address, key)).statusCode, 401)
  assert.equal(keyLookups.length - before, 1)
})

test('revocation takes effect at once; a new key works at once', async () => {
  const address = newAddress()
  const { accountId, apiKey } = await service.newAccount()
  assert.equal((await from(address, apiKey)).statusCode, 404)
  const keys = (await service.admin({ method: 'GET', url: `/admin/accounts/${accountId}/api-keys` })).json<{ id: string }[]>()
  assert.equal((await service.admin({ method: 'DELETE', url: `/admin/api-keys/${keys[0]!.id}` })).statusCode, 204)
  assert.equal((await from(address, apiKey)).statusCode, 401)
  const fresh = (await service.admin({ method: 'POST', url: `/admin/accounts/${accountId}/api-keys` })).json<{ key: string }>().key
  assert.equal((await from(address, fresh)).statusCode, 404)
})

test('wrong admin tokens count too', async () => {
  const address = newAddress()
  const statuses: number[] = []
  for (let i = 0; i < LIMIT + 3; i++) {
    const res = await service.app.inject({
      method: 'GET',
      url: '/admin/accounts',
      remoteAddress: address,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}-${i}` },
    })
    statuses.push(res.statusCode)
  }
  assert.deepEqual(statuses, [...Array(LIMIT).fill(401), 429, 429, 429])
  const right = await service.app.inject({
    method: 'GET',
    url: '/admin/accounts',
    remoteAddress: newAddress(),
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  })
  assert.equal(right.statusCode, 200)
})

test('with REDIS_URL, failures are counted across nodes', { skip: !process.env.REDIS_URL && 'REDIS_URL is not set' }, async () => {
  const other = await startTestService({ env: { PAYWATCH_AUTH_FAILURES: String(LIMIT), ...redisEnv }, background: false })
  try {
    const address = newAddress()
    const statuses: number[] = []
    for (let i = 0; i < LIMIT + 2; i++) {
      const node = i % 2 === 0 ? service : other
      statuses.push(
        (await node.app.inject({ method: 'GET', url: '/v2/payments/none', remoteAddress: address, headers: { 'x-api-key': randomKey() } }))
          .statusCode,
      )
    }
    assert.deepEqual(statuses, [...Array(LIMIT).fill(401), 429, 429])
  } finally {
    await other.close()
  }
})

test('an IPv6 client is counted by its /64: new addresses in the same /64 do not start a new count', async () => {
  const prefix = `2001:db8:${randomInt(65536).toString(16)}:${randomInt(65536).toString(16)}`
  const inPrefix = () => `${prefix}:${randomInt(65536).toString(16)}:${randomInt(65536).toString(16)}::${randomInt(1, 65535).toString(16)}`
  const statuses: number[] = []
  for (let i = 0; i < LIMIT + 5; i++) statuses.push((await from(inPrefix(), randomKey())).statusCode)
  assert.deepEqual(statuses, [...Array(LIMIT).fill(401), ...Array(5).fill(429)], 'one count for the whole /64')
  const { apiKey } = await service.newAccount()
  assert.equal((await from(`2001:db8:ffff:${randomInt(65536).toString(16)}::1`, apiKey)).statusCode, 404, 'another /64 is not affected')
})
