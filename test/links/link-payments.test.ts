import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startAnvil, type Anvil } from '../support/index.ts'
import { manualClock } from '../support/clock.ts'
import { startTestService, type TestService } from '../support/service.ts'
import { assertProblem, createLink, HIGH_LIMITS, settle, track, VERSION, type Account } from './support.ts'

let anvil: Anvil
let service: TestService
let owner: Account
let linkId: string
/** The 25 payments of the link, as settled: confirmed in one block, at the same instant. */
const settled: { secretId: string; confirmedAt: string }[] = []
const clock = manualClock(new Date('2026-03-01T10:00:00.000Z'))

before(async () => {
  anvil = await startAnvil()
  service = await startTestService({
    chains: { ethereum: { rpc: [anvil.rpcUrl], chainId: anvil.chainId } },
    background: false,
    clock,
    env: HIGH_LIMITS,
  })
  owner = await service.newAccount('merchant')
  linkId = await createLink(service, owner.accountId)
  const secrets: string[] = []
  for (let i = 0; i < 25; i++) {
    const created = await track(service, owner, { link_id: linkId, payload: { order: i, note: 'café' } })
    assert.equal(created.status, 201, JSON.stringify(created.body))
    secrets.push(created.secretId)
  }
  // A pending and a failed payment of the link are never listed.
  const pending = await track(service, owner, { link_id: linkId })
  const failed = await track(service, owner, { link_id: linkId })
  assert.equal(pending.status, 201)
  await settle(service, owner, failed.secretId, clock(), 'failed')
  // One block: every payment is judged with the same clock reading.
  for (const secretId of secrets) {
    const t = await settle(service, owner, secretId, clock())
    settled.push({ secretId, confirmedAt: t.confirmedAt!.toISOString() })
  }
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

const page = (after?: string, headers: Record<string, string> = VERSION) =>
  service.api(owner.apiKey, { method: 'GET', url: `/links/${linkId}/payments`, query: after === undefined ? {} : { after }, headers })

test('pages through 25 payments confirmed in one block: 10, 10, 5, none skipped or repeated', async () => {
  const seen: Record<string, any>[] = []
  let cursor: string | undefined
  const sizes: number[] = []
  for (;;) {
    const res = await page(cursor)
    assert.equal(res.statusCode, 200, res.body)
    const records = res.json<Record<string, any>[]>()
    sizes.push(records.length)
    if (records.length === 0) break
    seen.push(...records)
    cursor = records.at(-1)!.confirmed_at
    assert.ok(sizes.length < 10, 'paging does not end')
  }
  assert.deepEqual(sizes, [10, 10, 5, 0])
  const orders = seen.map((r) => r.payload.order)
  assert.deepEqual(
    orders,
    Array.from({ length: 25 }, (_, i) => i),
    'every payment once, in confirmation order',
  )
  const times = seen.map((r) => Date.parse(r.confirmed_at))
  for (let i = 1; i < times.length; i++) assert.ok(times[i]! > times[i - 1]!, 'confirmed_at strictly ascending')
  assert.deepEqual(
    seen.map((r) => r.confirmed_at),
    settled.map((s) => s.confirmedAt),
  )
})

test('after is strict and accepts ISO 8601 in other forms', async () => {
  const fifth = settled[4]!.confirmedAt
  const strictlyAfter = (await page(fifth)).json<any[]>()
  assert.equal(strictlyAfter[0].payload.order, 5, 'the payment at exactly `after` is left out')
  const justBefore = new Date(Date.parse(fifth) - 1).toISOString()
  assert.equal((await page(justBefore)).json<any[]>()[0].payload.order, 4)
  // The same instant written with an offset, without fraction digits or with microseconds.
  const local = new Date(Date.parse(fifth) + 2 * 3600_000).toISOString().replace('Z', '+02:00')
  assert.equal((await page(local)).json<any[]>()[0].payload.order, 5)
  const micro = fifth.replace('Z', '999Z')
  assert.equal((await page(micro)).json<any[]>()[0].payload.order, 5)
  // An unencoded "+" arrives as a space.
  const res = await service.api(owner.apiKey, { method: 'GET', url: `/links/${linkId}/payments?after=${local}`, headers: VERSION })
  assert.equal(res.json<any[]>()[0].payload.order, 5)
  assert.equal((await page('2026-03-01')).json<any[]>().length, 10, 'a date alone is midnight UTC')
  assert.equal((await page(settled[24]!.confirmedAt)).json<any[]>().length, 0)
  assert.equal((await page('2099-01-01T00:00:00Z')).json<any[]>().length, 0)
})

test('an invalid after is a 400 naming the parameter', async () => {
  for (const bad of [
    'yesterday',
    '2026-13-01T00:00:00Z',
    '2026-02-30T00:00:00Z',
    '2026-03-01T25:00:00Z',
    '1700000000',
    '',
    '2026-03-01T10:00:00+99:00',
  ]) {
    const body = assertProblem(await page(bad), 400, 'VALIDATION_FAILED')
    assert.equal(body.errors[0].path, 'after', bad)
  }
  const twice = await service.api(owner.apiKey, {
    method: 'GET',
    url: `/links/${linkId}/payments?after=2026-01-01&after=2026-01-02`,
    headers: VERSION,
  })
  assertProblem(twice, 400, 'VALIDATION_FAILED')
})

test('with x-api-version: summary records (2.2)', async () => {
  const [first] = (await page()).json<Record<string, unknown>[]>()
  assert.deepEqual(Object.keys(first!).sort(), [
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
  assert.deepEqual(first!.payload, { order: 0, note: 'café' })
  assert.equal(first!.after_block, '0')
  assert.equal(first!.amount, '0.5')
  assert.equal(first!.commitment, 'confirmed')
  assert.equal(first!.token, '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE')
})

test('without x-api-version: earlier records (2.3), payload as a string of JSON', async () => {
  const res = await page(undefined, {})
  assert.equal(res.statusCode, 200)
  const records = res.json<Record<string, unknown>[]>()
  assert.equal(records.length, 10)
  assert.deepEqual(Object.keys(records[0]!), [
    'status',
    'failed_reason',
    'blockchain',
    'transaction',
    'sender',
    'receiver',
    'token',
    'amount',
    'payload',
    'confirmed_at',
  ])
  assert.equal(records[0]!.status, 'success')
  assert.equal(records[0]!.failed_reason, null)
  assert.equal(typeof records[0]!.payload, 'string')
  assert.deepEqual(JSON.parse(records[0]!.payload as string), { order: 0, note: 'café' })
})

test('an unknown x-api-version is a 400 listing the supported ones', async () => {
  const body = assertProblem(await page(undefined, { 'x-api-version': '2024-01' }), 400, 'UNSUPPORTED_API_VERSION')
  assert.match(body.detail, /2025-10/)
})

test("another account's link, an unknown link and a removed link are 404", async () => {
  const other = await service.newAccount('other')
  assertProblem(await service.api(other.apiKey, { method: 'GET', url: `/links/${linkId}/payments`, headers: VERSION }), 404, 'NOT_FOUND')
  assertProblem(await service.api(owner.apiKey, { method: 'GET', url: '/links/no-such-link/payments', headers: VERSION }), 404, 'NOT_FOUND')
  const gone = await createLink(service, owner.accountId)
  const paid = await track(service, owner, { link_id: gone })
  await settle(service, owner, paid.secretId, clock())
  assert.equal((await service.api(owner.apiKey, { method: 'GET', url: `/links/${gone}/payments` })).json<any[]>().length, 1)
  assert.equal((await service.admin({ method: 'DELETE', url: `/admin/links/${gone}` })).statusCode, 204)
  assertProblem(await service.api(owner.apiKey, { method: 'GET', url: `/links/${gone}/payments` }), 404, 'NOT_FOUND')
  assertProblem(await service.admin({ method: 'DELETE', url: `/admin/links/${gone}` }), 404, 'NOT_FOUND')
})

test('link payments need an API key and count against its rate limits', async () => {
  const res = await service.app.inject({ method: 'GET', url: `/links/${linkId}/payments` })
  assertProblem(res, 401, 'UNAUTHORIZED')
  const ok = await page()
  assert.ok(ok.headers['ratelimit-limit'], 'rate limit headers')
})
