// Records of POST /v2/payments and GET /v2/payments/{secret_id}: both shapes, echoed forms,
// idempotency, conflicts, trace then track, and account isolation (docs/api.md §3).
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { startAnvil, type Anvil } from '../support/index.ts'
import { startTestService, type TestService } from '../support/service.ts'
import { assertProblem, createBody, earlierBody, FEE_RECEIVER, ISO_MS, NATIVE, RECEIVER, SENDER, TX_HASH } from './payments-fixtures.ts'

let anvil: Anvil
let service: TestService
let apiKey: string

before(async () => {
  anvil = await startAnvil()
  service = await startTestService({
    chains: { ethereum: { rpc: [anvil.rpcUrl], chainId: anvil.chainId } },
    env: { PAYWATCH_RATE_RPS: '100000', PAYWATCH_RATE_DAILY: '1000000' },
    background: false,
  })
  ;({ apiKey } = await service.newAccount())
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

const post = (body: unknown, key = apiKey) => service.api(key, { method: 'POST', url: '/v2/payments', payload: body as object })
const get = (secret: string, key = apiKey) => service.api(key, { method: 'GET', url: `/v2/payments/${encodeURIComponent(secret)}` })

const CURRENT_FIELDS = [
  'status',
  'blockchain',
  'transaction',
  'sender',
  'nonce',
  'receiver',
  'token',
  'decimals',
  'commitment',
  'confirmations',
  'after_block',
  'deadline',
  'amount',
  'fee_amount',
  'fee_receiver',
  'payload',
  'secret_id',
  'callback',
  'release',
  'forward_to',
  'forward_on_failure',
  'confirmed_at',
  'created_at',
  'updated_at',
]
const EARLIER_FIELDS = [
  'status',
  'blockchain',
  'transaction',
  'sender',
  'nonce',
  'receiver',
  'token',
  'confirmations',
  'after_block',
  'deadline',
  'amount',
  'payload',
  'uuid',
  'callback',
  'release',
  'forward_to',
  'forward_on_failure',
  'confirmed_at',
  'created_at',
  'updated_at',
]

describe('current shape', () => {
  test('a trace: every field of the full record, defaults, echoed forms', async () => {
    const secret = randomUUID()
    const res = await post(
      createBody({
        secret_id: secret,
        sender: SENDER.toLowerCase(),
        receiver: RECEIVER.toUpperCase().replace('0X', '0x'),
        token: NATIVE.toLowerCase(),
        nonce: 7,
        after_block: 12_345,
        amount: '0001.2500',
      }),
    )
    assert.equal(res.statusCode, 201, res.body)
    assert.match(String(res.headers['content-type']), /^application\/json/)
    const record = res.json()
    assert.deepEqual(Object.keys(record), CURRENT_FIELDS)
    assert.equal(record.deadline, null)
    assert.equal(record.status, 'pending')
    assert.equal(record.blockchain, 'ethereum')
    assert.equal(record.transaction, null)
    assert.equal(record.sender, SENDER) // EIP-55
    assert.equal(record.receiver, RECEIVER)
    assert.equal(record.token, NATIVE)
    assert.equal(record.nonce, '7')
    assert.equal(record.after_block, '12345')
    assert.equal(record.amount, '1.25')
    assert.equal(record.decimals, 18)
    assert.equal(record.commitment, 'confirmed')
    assert.equal(record.confirmations, 1)
    assert.equal(record.fee_amount, null)
    assert.equal(record.fee_receiver, null)
    assert.equal(record.payload, null)
    assert.equal(record.secret_id, secret)
    assert.equal(record.callback, 'https://shop.example/paywatch/callback')
    assert.equal(record.release, false)
    assert.equal(record.forward_to, null)
    assert.equal(record.forward_on_failure, true)
    assert.equal(record.confirmed_at, null)
    assert.match(record.created_at, ISO_MS)
    assert.match(record.updated_at, ISO_MS)
    assert.equal(record.created_at, record.updated_at)
    assert.ok(Math.abs(Date.parse(record.created_at) - Date.now()) < 60_000)
    assert.equal('failed_reason' in record, false)

    const read = await get(secret)
    assert.equal(read.statusCode, 200)
    assert.deepEqual(read.json(), record)
  })

  test('optional fields are stored and echoed', async () => {
    const payload = { order: 'A-1', nested: { list: [1, 'two', null], ok: true }, unicode: 'zahlung ✓ 支付' }
    const res = await post(
      createBody({
        transaction: TX_HASH,
        commitment: 'finalized',
        payload,
        forward_to: 'https://shop.example/thanks',
        forward_on_failure: false,
        fee_amount: '0.010',
        fee_receiver: FEE_RECEIVER.toLowerCase(),
        nonce: '18446744073709551615',
        after_block: '99999999999',
      }),
    )
    assert.equal(res.statusCode, 201, res.body)
    const record = res.json()
    assert.equal(record.transaction, TX_HASH)
    assert.equal(record.commitment, 'finalized')
    assert.equal(record.confirmations, 1)
    assert.deepEqual(record.payload, payload)
    assert.equal(record.forward_to, 'https://shop.example/thanks')
    assert.equal(record.forward_on_failure, false)
    assert.equal(record.fee_amount, '0.01')
    assert.equal(record.fee_receiver, FEE_RECEIVER)
    assert.equal(record.nonce, '18446744073709551615')
    assert.equal(record.after_block, '99999999999')
  })

  test('confirmations are stored with confirmed commitment', async () => {
    const res = await post(createBody({ commitment: 'confirmed', confirmations: 12 }))
    assert.equal(res.statusCode, 201, res.body)
    assert.equal(res.json().confirmations, 12)
  })
})

describe('earlier (uuid) shape', () => {
  test('numbers for nonce and after_block, uuid instead of secret_id, no decimals/commitment/fees', async () => {
    const body = earlierBody({ nonce: '42', after_block: '77', payload: { a: 1 } })
    const res = await post(body)
    assert.equal(res.statusCode, 201, res.body)
    const record = res.json()
    assert.deepEqual(Object.keys(record), EARLIER_FIELDS)
    assert.equal(record.nonce, 42)
    assert.equal(record.after_block, 77)
    assert.equal(record.deadline, null)
    assert.equal(record.uuid, body.uuid)
    assert.equal(record.transaction, TX_HASH)
    assert.equal(record.confirmations, 2)
    assert.equal(record.release, false)
    assert.equal(record.callback, null)
    assert.match(record.created_at, ISO_MS)

    const read = await get(String(body.uuid))
    assert.equal(read.statusCode, 200)
    assert.deepEqual(read.json(), record)

    const again = await post(body)
    assert.equal(again.statusCode, 200)
    assert.deepEqual(again.json(), record)
  })
})

describe('earlier (uuid) shape beyond 2^53', () => {
  test('nonce and after_block are echoed as JSON numbers with every digit', async () => {
    const body = earlierBody({ nonce: '18446744073709551614', after_block: '9007199254740995' })
    const res = await post(body)
    assert.equal(res.statusCode, 201, res.body)
    assert.match(res.body, /"nonce":18446744073709551614,/)
    assert.match(res.body, /"after_block":9007199254740995,/)
    const read = await get(String(body.uuid))
    assert.match(read.body, /"nonce":18446744073709551614,/)
    assert.match(read.body, /"after_block":9007199254740995,/)
  })
})

describe('idempotency', () => {
  test('the same body twice → 201 then 200 with the identical record', async () => {
    const body = createBody({ payload: { z: 1, a: 2 } })
    const first = await post(body)
    const second = await post(body)
    assert.equal(first.statusCode, 201)
    assert.equal(second.statusCode, 200)
    assert.deepEqual(second.json(), first.json())
    assert.equal(second.body, first.body)
  })

  test('a repeat naming the same payment in other letter case or digits is the same payment', async () => {
    const body = createBody({ amount: '2.5', nonce: 501 })
    const first = await post(body)
    const second = await post({
      ...body,
      sender: SENDER.toLowerCase(),
      amount: '2.50',
      nonce: '501',
      token: NATIVE.toUpperCase().replace('0X', '0x'),
    })
    assert.equal(first.statusCode, 201)
    assert.equal(second.statusCode, 200, second.body)
    assert.deepEqual(second.json(), first.json())
  })

  test('fields outside the payment (callback, payload) do not make a repeat a conflict; the stored record wins', async () => {
    const body = createBody()
    const first = await post(body)
    const second = await post({ ...body, callback: 'https://other.example/cb', payload: { changed: true } })
    assert.equal(second.statusCode, 200, second.body)
    assert.deepEqual(second.json(), first.json())
  })
})

describe('conflicts → 409 CONFLICT', () => {
  test('the same payment under another secret_id', async () => {
    const body = createBody()
    assert.equal((await post(body)).statusCode, 201)
    assertProblem(await post({ ...body, secret_id: randomUUID() }), 409, 'CONFLICT')
    assertProblem(
      await post({ ...body, secret_id: undefined, uuid: randomUUID(), transaction: TX_HASH, confirmations: 1 }),
      409,
      'CONFLICT',
    )
  })

  test('the same secret_id with other payment fields', async () => {
    const body = createBody({ transaction: TX_HASH })
    assert.equal((await post(body)).statusCode, 201)
    const changes: Record<string, unknown>[] = [
      { nonce: Number(body.nonce) + 1_000_000 },
      { receiver: FEE_RECEIVER },
      { amount: '1.51' },
      { token: '0x0000000000000000000000000000000000000001' },
      { confirmations: 3 },
      { commitment: 'finalized' },
      { fee_amount: '0.1', fee_receiver: FEE_RECEIVER },
      { transaction: `0x${'cd'.repeat(32)}` },
    ]
    for (const change of changes) {
      const problem = assertProblem(await post({ ...body, ...change }), 409, 'CONFLICT')
      assert.match(problem.detail, /secret_id|already/)
    }
    // The stored record is unchanged.
    const read = await get(String(body.secret_id))
    assert.equal(read.json().amount, '1.5')
    assert.equal(read.json().transaction, TX_HASH)
  })
})

describe('trace then track', () => {
  test('a repeat with the transaction attaches it to the trace', async () => {
    const body = createBody()
    const emitted: (string | null)[] = []
    const onTracked = (tracking: { secretId: string; transaction: string | null }) => {
      if (tracking.secretId === body.secret_id) emitted.push(tracking.transaction)
    }
    service.events.on('tracked', onTracked)
    after(() => void service.events.off('tracked', onTracked))
    const trace = await post(body)
    assert.equal(trace.statusCode, 201)
    assert.equal(trace.json().transaction, null)

    const tracked = await post({ ...body, transaction: TX_HASH.toUpperCase().replace('0X', '0x') })
    assert.equal(tracked.statusCode, 200, tracked.body)
    assert.equal(tracked.json().transaction, TX_HASH)
    assert.equal(tracked.json().created_at, trace.json().created_at)
    assert.ok(Date.parse(tracked.json().updated_at) >= Date.parse(trace.json().updated_at))

    const read = await get(String(body.secret_id))
    assert.equal(read.json().transaction, TX_HASH)
    // Repeating the trace form afterwards keeps the transaction; another transaction is a conflict.
    const repeat = await post(body)
    assert.equal(repeat.statusCode, 200)
    assert.equal(repeat.json().transaction, TX_HASH)
    assertProblem(await post({ ...body, transaction: `0x${'ef'.repeat(32)}` }), 409, 'CONFLICT')
    assert.equal((await post({ ...body, transaction: TX_HASH })).statusCode, 200)
    // The engine hears of the new trace and of its transaction, not of the repeats.
    assert.deepEqual(emitted, [null, TX_HASH])
  })
})

describe('accounts are isolated', () => {
  test("another account's tracking is a 404, and its payment identity is free for another account", async () => {
    const other = await service.newAccount('other')
    const body = createBody()
    assert.equal((await post(body)).statusCode, 201)
    assertProblem(await get(String(body.secret_id), other.apiKey), 404, 'NOT_FOUND')
    const theirs = await post(body, other.apiKey)
    assert.equal(theirs.statusCode, 201, theirs.body)
    assert.equal((await get(String(body.secret_id))).statusCode, 200)
  })
})
