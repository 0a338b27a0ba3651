import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { getAddress } from 'viem'
import type { Tracking } from '../../src/domain/tracking.ts'
import { completeTracking } from '../../src/store/complete-tracking.ts'
import { startTestService, type TestService } from '../support/service.ts'
import { insertTestTracking, randomHash } from '../support/trackings.ts'

let service: TestService
let apiKey: string
let accountId: string
before(async () => {
  // Ethereum is tracked (its RPC is never called here: background work is off); other chains are not.
  service = await startTestService({
    background: false,
    env: {
      PAYWATCH_RPC_ETHEREUM: 'http://127.0.0.1:9',
      PAYWATCH_RATE_RPS: '100000',
      PAYWATCH_RATE_PARALLEL: '1000',
      PAYWATCH_RATE_DAILY: '10000000',
    },
  })
  ;({ apiKey, accountId } = await service.newAccount())
})
after(async () => {
  await service?.close()
})

const bodyOf = (t: Tracking, changes: Record<string, unknown> = {}) => ({
  blockchain: t.blockchain,
  transaction: t.transaction,
  sender: t.sender,
  nonce: String(t.nonce),
  secret_id: t.secretId,
  ...changes,
})
const release = (payload: unknown, key = apiKey) =>
  service.api(key, { method: 'POST', url: '/v2/payments/release', payload: payload as object })

/** Counts 'released' events for one tracking while `work` runs. */
async function releasedEvents(id: string, work: () => Promise<void>): Promise<number> {
  let count = 0
  const listener = (t: Tracking) => void (t.id === id && count++)
  service.events.on('released', listener)
  try {
    await work()
  } finally {
    service.events.off('released', listener)
  }
  return count
}

test('a pending payment is not released: 409', async () => {
  const t = await insertTestTracking(service.database.db, accountId)
  const res = await release(bodyOf(t))
  assert.equal(res.statusCode, 409, res.body)
  assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
  assert.equal(res.json().code, 'CONFLICT')
})

test('a completed payment is released: 200 with the record, once; a repeat answers the same', async () => {
  const t = await insertTestTracking(service.database.db, accountId)
  await completeTracking(service.database.db, t.id, { status: 'success', transaction: t.transaction! }, new Date())
  let first!: Awaited<ReturnType<typeof release>>
  const events = await releasedEvents(t.id, async () => {
    first = await release(bodyOf(t))
  })
  assert.equal(first.statusCode, 200, first.body)
  const record = first.json()
  assert.equal(record.release, true)
  assert.equal(record.status, 'success')
  assert.equal(record.secret_id, t.secretId)
  assert.equal(record.nonce, '7')
  assert.equal(record.forward_to, 'https://shop.example/thanks')
  assert.equal(events, 1)
  assert.match(String(first.headers['x-signature']), /^[A-Za-z0-9_-]+=*$/, 'signed like GET /v2/payments/{secret_id}')

  const stored = await service.api(apiKey, { method: 'GET', url: `/v2/payments/${t.secretId}` })
  assert.equal(stored.json().release, true)

  const again = await releasedEvents(t.id, async () => {
    const repeat = await release(bodyOf(t))
    assert.equal(repeat.statusCode, 200)
    assert.equal(repeat.json().release, true)
    assert.equal(repeat.json().updated_at, record.updated_at)
  })
  assert.equal(again, 0, 'an already released payment is not announced again')
})

test('earlier form: uuid and a numeric nonce; the answer is in the earlier shape', async () => {
  const t = await insertTestTracking(service.database.db, accountId, { shape: 'earlier' })
  await completeTracking(service.database.db, t.id, { status: 'failed', failedReason: 'AMOUNT_MISMATCH' }, new Date())
  const { secret_id: _secret, ...rest } = bodyOf(t)
  const res = await release({ ...rest, uuid: t.secretId, nonce: 7 })
  assert.equal(res.statusCode, 200, res.body)
  const record = res.json()
  assert.equal(record.uuid, t.secretId)
  assert.equal(record.secret_id, undefined)
  assert.equal(record.nonce, 7)
  assert.equal(record.status, 'failed')
  assert.equal(record.failed_reason, 'AMOUNT_MISMATCH')
  assert.equal(record.release, true)
})

test('a null secret_id or uuid counts as absent: the other one names the payment', async () => {
  const t = await insertTestTracking(service.database.db, accountId)
  await completeTracking(service.database.db, t.id, { status: 'success', transaction: t.transaction! }, new Date())
  const { secret_id: _secret, ...rest } = bodyOf(t)
  const byUuid = await release({ ...rest, secret_id: null, uuid: t.secretId })
  assert.equal(byUuid.statusCode, 200, byUuid.body)
  const bySecret = await release({ ...bodyOf(t), uuid: null })
  assert.equal(bySecret.statusCode, 200, bySecret.body)
  assert.equal(bySecret.json().release, true)
})

test("another account's payment is unknown: 404, and it stays unreleased", async () => {
  const t = await insertTestTracking(service.database.db, accountId)
  await completeTracking(service.database.db, t.id, { status: 'success', transaction: t.transaction! }, new Date())
  const other = await service.newAccount('other')
  const res = await release(bodyOf(t), other.apiKey)
  assert.equal(res.statusCode, 404, res.body)
  assert.equal(res.json().code, 'NOT_FOUND')
  const stored = await service.api(apiKey, { method: 'GET', url: `/v2/payments/${t.secretId}` })
  assert.equal(stored.json().release, false)
})

test('fields that do not name the payment: 404; addresses in any letter case match', async () => {
  const t = await insertTestTracking(service.database.db, accountId)
  await completeTracking(service.database.db, t.id, { status: 'success', transaction: t.transaction! }, new Date())
  const mismatches = [
    { secret_id: 'no-such-secret' },
    { sender: '0x1111111111111111111111111111111111111111' },
    { nonce: 8 },
    { transaction: randomHash() },
  ]
  for (const change of mismatches) {
    const res = await release(bodyOf(t, change))
    assert.equal(res.statusCode, 404, `${JSON.stringify(change)}: ${res.body}`)
  }
  const res = await release(
    bodyOf(t, { sender: getAddress(t.sender!), transaction: t.transaction!.toUpperCase().replace('0X', '0x'), nonce: 7 }),
  )
  assert.equal(res.statusCode, 200, res.body)
  assert.equal(res.json().release, true)
})

test('a chain this service does not track: 400 UNSUPPORTED_BLOCKCHAIN, unless a completed payment of it matches', async () => {
  const t = await insertTestTracking(service.database.db, accountId)
  await completeTracking(service.database.db, t.id, { status: 'success', transaction: t.transaction! }, new Date())
  const res = await release(bodyOf(t, { blockchain: 'bsc' }))
  assert.equal(res.statusCode, 400, res.body)
  assert.equal(res.json().code, 'UNSUPPORTED_BLOCKCHAIN')
  assert.deepEqual(res.json().errors, [{ path: 'blockchain', message: 'is not a tracked blockchain' }])
  // A payment completed while its chain was configured is still released after the chain is removed.
  const old = await insertTestTracking(service.database.db, accountId, { blockchain: 'polygon' })
  await completeTracking(service.database.db, old.id, { status: 'success', transaction: old.transaction! }, new Date())
  const released = await release(bodyOf(old))
  assert.equal(released.statusCode, 200, released.body)
  assert.equal(released.json().release, true)
})

test('a payment judged by its replacing transaction is released by either hash', async () => {
  const t = await insertTestTracking(service.database.db, accountId)
  const replacing = randomHash()
  await completeTracking(service.database.db, t.id, { status: 'success', transaction: replacing }, new Date())
  assert.equal((await release(bodyOf(t, { transaction: randomHash() }))).statusCode, 404)
  const byGiven = await release(bodyOf(t))
  assert.equal(byGiven.statusCode, 200, byGiven.body)
  assert.equal(byGiven.json().transaction, replacing)
  const byReplacing = await release(bodyOf(t, { transaction: replacing }))
  assert.equal(byReplacing.statusCode, 200, byReplacing.body)
})

test('a trace that timed out (no transaction) is released with the hash the integrator knows', async () => {
  const t = await insertTestTracking(service.database.db, accountId, { transaction: null })
  await completeTracking(service.database.db, t.id, { status: 'failed', failedReason: 'TRACKING_TIMED_OUT' }, new Date())
  const res = await release(bodyOf(t, { transaction: randomHash() }))
  assert.equal(res.statusCode, 200, res.body)
  assert.equal(res.json().transaction, null)
})

test('a payment tracked without a nonce that ended before it was seen: released with the nulls of its record', async () => {
  // Timed out at its deadline: no sender given, none found; the record has null transaction, sender and nonce.
  const t = await insertTestTracking(service.database.db, accountId, {
    nonceless: true,
    sender: null,
    nonce: null,
    transaction: null,
    deadline: 1_800_000_000n,
  })
  await completeTracking(service.database.db, t.id, { status: 'failed', failedReason: 'TRACKING_TIMED_OUT' }, new Date())
  const res = await release(bodyOf(t, { nonce: null }))
  assert.equal(res.statusCode, 200, res.body)
  assert.deepEqual([res.json().sender, res.json().nonce, res.json().transaction, res.json().release], [null, null, null, true])
  // What the record does not have cannot be compared: an integrator that sends what it knows is answered the same.
  const known = await release(bodyOf(t, { sender: '0x1111111111111111111111111111111111111111', nonce: 3, transaction: randomHash() }))
  assert.equal(known.statusCode, 200, known.body)
  // Null still has to be sent: a field left out is a malformed request.
  const { sender: _, ...withoutSender } = bodyOf(t, { nonce: null })
  const missing = await release(withoutSender)
  assert.equal(missing.statusCode, 400, missing.body)
  assert.deepEqual(
    missing.json().errors.map((e: { path: string }) => e.path),
    ['sender'],
  )
})

test('a payment without a nonce failed on its sender: released with its sender, its transaction and a null nonce', async () => {
  const t = await insertTestTracking(service.database.db, accountId, { nonceless: true, nonce: null, deadline: null })
  await completeTracking(service.database.db, t.id, { status: 'failed', failedReason: 'SENDER_MISMATCH' }, new Date())
  assert.equal((await release(bodyOf(t, { nonce: null, sender: '0x1111111111111111111111111111111111111111' }))).statusCode, 404)
  assert.equal((await release(bodyOf(t, { nonce: null, transaction: randomHash() }))).statusCode, 404)
  const res = await release(bodyOf(t, { nonce: null }))
  assert.equal(res.statusCode, 200, res.body)
  assert.equal(res.json().nonce, null)
})

test('null does not match what the record has: 404', async () => {
  const t = await insertTestTracking(service.database.db, accountId)
  await completeTracking(service.database.db, t.id, { status: 'success', transaction: t.transaction! }, new Date())
  for (const changes of [{ sender: null }, { nonce: null }, { transaction: null }]) {
    const res = await release(bodyOf(t, changes))
    assert.equal(res.statusCode, 404, `${JSON.stringify(changes)}: ${res.body}`)
  }
})

test('every missing or malformed field is reported: 400 VALIDATION_FAILED', async () => {
  const empty = await release({})
  assert.equal(empty.statusCode, 400, empty.body)
  assert.equal(empty.json().code, 'VALIDATION_FAILED')
  assert.deepEqual(
    empty
      .json()
      .errors.map((e: { path: string }) => e.path)
      .sort(),
    ['blockchain', 'nonce', 'secret_id', 'sender', 'transaction'],
  )

  const bad = await release({ blockchain: 42, transaction: '0x12', sender: 'alice', nonce: -1, secret_id: 'has spaces' })
  assert.equal(bad.statusCode, 400)
  assert.deepEqual(
    bad
      .json()
      .errors.map((e: { path: string }) => e.path)
      .sort(),
    ['blockchain', 'nonce', 'secret_id', 'sender', 'transaction'],
  )

  for (const nonce of [1.5, '0x07', true, '']) {
    const res = await release({
      blockchain: 'ethereum',
      transaction: randomHash(),
      sender: '0x1111111111111111111111111111111111111111',
      nonce,
      secret_id: 'abc',
    })
    assert.equal(res.statusCode, 400, `nonce ${JSON.stringify(nonce)}`)
    assert.deepEqual(
      res.json().errors.map((e: { path: string }) => e.path),
      ['nonce'],
    )
  }
  for (const payload of [[], 'text', null]) {
    const res = await service.api(apiKey, {
      method: 'POST',
      url: '/v2/payments/release',
      payload: JSON.stringify(payload),
      headers: { 'content-type': 'application/json' },
    })
    assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`)
  }
})

test('the release endpoint needs an API key', async () => {
  const res = await service.app.inject({ method: 'POST', url: '/v2/payments/release', payload: {} })
  assert.equal(res.statusCode, 401)
})
