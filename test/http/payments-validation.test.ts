// POST /v2/payments and GET /v2/payments/{secret_id}: every validation rule and error status
// (docs/api.md §3 and §6), through app.inject() on the real service.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { getAddress, type Address } from 'viem'
import { deployToken, startAnvil, type Anvil } from '../support/index.ts'
import { startTestService, type TestService } from '../support/service.ts'
import { assertFieldError, assertProblem, createBody, earlierBody, NATIVE, TX_HASH } from './payments-fixtures.ts'

let anvil: Anvil
let service: TestService
let apiKey: string
let usdc: Address

before(async () => {
  anvil = await startAnvil()
  usdc = await deployToken(anvil, 'USD Coin', 'USDC', 6)
  service = await startTestService({
    chains: { ethereum: { rpc: [anvil.rpcUrl], chainId: anvil.chainId } },
    env: { PAYWATCH_RATE_RPS: '100000', PAYWATCH_RATE_DAILY: '1000000' },
  })
  ;({ apiKey } = await service.newAccount())
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

const post = (body: unknown, headers: Record<string, string> = {}) =>
  service.api(apiKey, { method: 'POST', url: '/v2/payments', payload: body as object, headers })

describe('each required field', () => {
  // `nonce` is optional (docs/api.md, "Payments without a nonce"); `sender` is required with it.
  for (const field of ['blockchain', 'sender', 'receiver', 'token', 'amount', 'after_block', 'secret_id', 'callback']) {
    test(`missing ${field} → 400 on path ${field}`, async () => {
      assertFieldError(await post(createBody({ [field]: undefined })), field)
    })
    test(`null ${field} → 400 on path ${field}`, async () => {
      assertFieldError(await post(createBody({ [field]: null })), field)
    })
  }

  test('an empty object lists every required field at once', async () => {
    const body = assertFieldError(await post({}), 'blockchain')
    const paths = body.errors!.map((e) => e.path).sort()
    assert.deepEqual(paths, ['after_block', 'amount', 'blockchain', 'callback', 'receiver', 'secret_id', 'token'])
  })

  test('earlier form: transaction and confirmations required, callback optional', async () => {
    assertFieldError(await post(earlierBody({ transaction: undefined })), 'transaction')
    assertFieldError(await post(earlierBody({ confirmations: undefined })), 'confirmations')
    const ok = await post(earlierBody())
    assert.equal(ok.statusCode, 201, ok.body)
    assert.equal(ok.json().callback, null)
  })

  test('earlier form with finalized commitment needs no confirmations', async () => {
    const res = await post(earlierBody({ confirmations: undefined, commitment: 'finalized' }))
    assert.equal(res.statusCode, 201, res.body)
  })
})

describe('each invalid value → 400 VALIDATION_FAILED with its path', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['blockchain not a string', { blockchain: 1 }, 'blockchain'],
    ['blockchain with spaces', { blockchain: 'ether eum' }, 'blockchain'],
    ['sender too short', { sender: '0x1234' }, 'sender'],
    ['sender not hex', { sender: `0x${'zz'.repeat(20)}` }, 'sender'],
    ['sender a number', { sender: 12 }, 'sender'],
    ['receiver invalid', { receiver: 'alice' }, 'receiver'],
    ['token invalid', { token: '0xEeee' }, 'token'],
    ['fee_receiver invalid', { fee_amount: '0.1', fee_receiver: 'bob' }, 'fee_receiver'],
    ['nonce negative', { nonce: -1 }, 'nonce'],
    ['nonce fractional', { nonce: 1.5 }, 'nonce'],
    ['nonce text', { nonce: 'one' }, 'nonce'],
    ['nonce exponent string', { nonce: '1e3' }, 'nonce'],
    ['nonce beyond uint64', { nonce: '18446744073709551616' }, 'nonce'],
    ['nonce unsafe number', { nonce: 2 ** 60 }, 'nonce'],
    ['nonce boolean', { nonce: true }, 'nonce'],
    ['deadline negative', { deadline: -1 }, 'deadline'],
    ['deadline fractional', { deadline: 1.5 }, 'deadline'],
    ['deadline text', { deadline: 'tomorrow' }, 'deadline'],
    ['deadline a date string', { deadline: '2030-01-01' }, 'deadline'],
    ['deadline beyond uint64', { deadline: '18446744073709551616' }, 'deadline'],
    // The record answers deadline as a JSON integer: as a string, no more than as a number (2^53 − 1).
    ['deadline as a string beyond 2^53 − 1', { deadline: '9007199254740992' }, 'deadline'],
    ['deadline as a number beyond 2^53 − 1', { deadline: 9007199254740992 }, 'deadline'],
    ['after_block negative', { after_block: -5 }, 'after_block'],
    ['after_block object', { after_block: { n: 1 } }, 'after_block'],
    ['amount a number', { amount: 1.5 }, 'amount'],
    ['amount negative', { amount: '-1' }, 'amount'],
    ['amount exponent', { amount: '1e18' }, 'amount'],
    ['amount trailing dot', { amount: '1.' }, 'amount'],
    ['amount leading dot', { amount: '.5' }, 'amount'],
    ['amount empty', { amount: '' }, 'amount'],
    ['amount with spaces', { amount: ' 1' }, 'amount'],
    ['amount too long', { amount: '1'.repeat(101) }, 'amount'],
    ['secret_id with spaces', { secret_id: 'a b' }, 'secret_id'],
    ['secret_id empty', { secret_id: '' }, 'secret_id'],
    ['secret_id too long', { secret_id: 'a'.repeat(129) }, 'secret_id'],
    ['secret_id a number', { secret_id: 7 }, 'secret_id'],
    ['callback not a URL', { callback: 'shop/callback' }, 'callback'],
    ['callback not http', { callback: 'ftp://shop.example/cb' }, 'callback'],
    ['callback too long', { callback: `https://shop.example/${'a'.repeat(2100)}` }, 'callback'],
    ['transaction short', { transaction: '0x1234' }, 'transaction'],
    ['transaction a number', { transaction: 5 }, 'transaction'],
    ['commitment unknown', { commitment: 'safe' }, 'commitment'],
    ['confirmations zero', { confirmations: 0 }, 'confirmations'],
    ['confirmations fractional', { confirmations: 1.5 }, 'confirmations'],
    ['confirmations a string', { confirmations: '3' }, 'confirmations'],
    ['confirmations huge', { confirmations: 1e9 }, 'confirmations'],
    ['finalized with confirmations', { commitment: 'finalized', confirmations: 3 }, 'confirmations'],
    ['payload an array', { payload: [1, 2] }, 'payload'],
    ['payload a string', { payload: '{"a":1}' }, 'payload'],
    ['payload over 8 KiB', { payload: { note: 'x'.repeat(8 * 1024) } }, 'payload'],
    ['forward_to not http', { forward_to: 'javascript:alert(1)' }, 'forward_to'],
    ['forward_to protocol-relative', { forward_to: '//evil.example/x' }, 'forward_to'],
    ['forward_to with a backslash for a slash', { forward_to: '/\\evil.example/x' }, 'forward_to'],
    ['forward_to scheme without slashes', { forward_to: 'https:evil.example/x' }, 'forward_to'],
    ['forward_to with a tab', { forward_to: 'https://shop.example/\tthanks' }, 'forward_to'],
    ['forward_on_failure a string', { forward_on_failure: 'false' }, 'forward_on_failure'],
    ['fee_amount a number', { fee_amount: 0.1, fee_receiver: '0x90F79bf6EB2c4f870365E785982E1f101E93b906' }, 'fee_amount'],
    ['fee_amount without fee_receiver', { fee_amount: '0.1' }, 'fee_receiver'],
    ['fee_receiver without fee_amount', { fee_receiver: '0x90F79bf6EB2c4f870365E785982E1f101E93b906' }, 'fee_amount'],
    ['secret_id together with uuid', { uuid: 'other' }, 'uuid'],
    ['amount beyond any uint256 amount', { amount: `1${'0'.repeat(60)}` }, 'amount'],
    [
      'fee_amount beyond any uint256 amount',
      { fee_amount: `1${'0'.repeat(60)}`, fee_receiver: '0x90F79bf6EB2c4f870365E785982E1f101E93b906' },
      'fee_amount',
    ],
    ['integration_id too long', { integration_id: 'i'.repeat(129) }, 'integration_id'],
    ['a NUL character in payload', { payload: { note: 'a\u0000b' } }, 'payload.note'],
    ['an unpaired surrogate in payload', { payload: { note: 'a\ud800b' } }, 'payload.note'],
  ]
  for (const [name, overrides, path] of cases) {
    test(name, async () => {
      assertFieldError(await post(createBody(overrides)), path)
    })
  }

  test('a body that is not an object → path ""', async () => {
    for (const body of [[createBody()], 'text', 42, null]) {
      assertFieldError(await post(JSON.stringify(body), { 'content-type': 'application/json' }), '')
    }
  })

  test('a null secret_id or uuid counts as absent: the other one chooses the form', async () => {
    const current = await post(createBody({ uuid: null }))
    assert.equal(current.statusCode, 201, current.body)
    assert.equal(typeof current.json().secret_id, 'string')
    const { secret_id: secretId, ...rest } = createBody({ transaction: `0x${'ab'.repeat(32)}`, confirmations: 1 })
    const earlier = await post({ ...rest, secret_id: null, uuid: String(secretId) })
    assert.equal(earlier.statusCode, 201, earlier.body)
    assert.equal(earlier.json().uuid, secretId)
    assert.equal(earlier.json().secret_id, undefined)
  })

  test('payload just under 8 KiB is accepted', async () => {
    const payload = { note: 'x'.repeat(8 * 1024 - 20) }
    assert.ok(Buffer.byteLength(JSON.stringify(payload)) <= 8 * 1024)
    const res = await post(createBody({ payload }))
    assert.equal(res.statusCode, 201, res.body)
    assert.deepEqual(res.json().payload, payload)
  })
})

describe('amounts against the token decimals read from the chain', () => {
  test('6-decimals ERC-20: 7 fractional digits → 400 on amount, 6 → 201 with decimals 6', async () => {
    assertFieldError(await post(createBody({ token: usdc, amount: '1.1234567' })), 'amount')
    const ok = await post(createBody({ token: usdc, amount: '1.123456' }))
    assert.equal(ok.statusCode, 201, ok.body)
    assert.equal(ok.json().decimals, 6)
    assert.equal(ok.json().amount, '1.123456')
    assert.equal(ok.json().token, getAddress(usdc))
  })

  test('trailing zeros beyond the decimals are not digits that count', async () => {
    const ok = await post(createBody({ token: usdc, amount: '2.50000000000' }))
    assert.equal(ok.statusCode, 201, ok.body)
    assert.equal(ok.json().amount, '2.5')
  })

  test('fee_amount is checked against the same decimals', async () => {
    const fee = { fee_receiver: '0x90F79bf6EB2c4f870365E785982E1f101E93b906' }
    assertFieldError(await post(createBody({ token: usdc, fee_amount: '0.0000001', ...fee })), 'fee_amount')
    const ok = await post(createBody({ token: usdc, fee_amount: '0.000001', ...fee }))
    assert.equal(ok.statusCode, 201, ok.body)
    assert.equal(ok.json().fee_amount, '0.000001')
  })

  test('native currency: 18 decimals', async () => {
    assertFieldError(await post(createBody({ amount: `0.${'1'.repeat(19)}` })), 'amount')
    const ok = await post(createBody({ amount: `0.${'1'.repeat(18)}` }))
    assert.equal(ok.statusCode, 201, ok.body)
    assert.equal(ok.json().decimals, 18)
  })

  test('a token address that is not a contract → 400 on token', async () => {
    const body = assertFieldError(await post(createBody({ token: anvil.accounts[5]!.address })), 'token')
    assert.equal(body.errors!.length, 1)
  })
})

describe('request-level errors', () => {
  test('malformed JSON → 400 MALFORMED_JSON', async () => {
    for (const text of ['{"blockchain":', '{bad json}', '[1,2', '"unterminated']) {
      assertProblem(await post(text, { 'content-type': 'application/json' }), 400, 'MALFORMED_JSON')
    }
  })

  test('prototype pollution keys → 400, nothing polluted', async () => {
    const res = await post('{"__proto__":{"polluted":true},"blockchain":"ethereum"}', { 'content-type': 'application/json' })
    assert.equal(res.statusCode, 400)
    assert.equal(({} as Record<string, unknown>).polluted, undefined)
  })

  test('body over 64 KiB → 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await post(createBody({ payload: { note: 'x'.repeat(65 * 1024) } }))
    assertProblem(res, 413, 'PAYLOAD_TOO_LARGE')
  })

  test('non-JSON content type → 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml']) {
      assertProblem(await post('blockchain=ethereum', { 'content-type': type }), 415, 'UNSUPPORTED_MEDIA_TYPE')
    }
  })

  test('a compressed JSON body → 415 UNSUPPORTED_MEDIA_TYPE; identity encoding is plain JSON', async () => {
    const { gzipSync } = await import('node:zlib')
    const gzipped = await post(gzipSync(JSON.stringify(createBody())), { 'content-type': 'application/json', 'content-encoding': 'gzip' })
    assertProblem(gzipped, 415, 'UNSUPPORTED_MEDIA_TYPE')
    const plain = await post(JSON.stringify(createBody()), { 'content-type': 'application/json', 'content-encoding': 'identity' })
    assert.equal(plain.statusCode, 201, plain.body)
  })

  test('JSON with a charset parameter is accepted', async () => {
    const res = await post(JSON.stringify(createBody()), { 'content-type': 'application/json; charset=utf-8' })
    assert.equal(res.statusCode, 201, res.body)
  })

  test('unknown route → 404 problem', async () => {
    assertProblem(await service.api(apiKey, { method: 'GET', url: '/v2/nothing-here' }), 404, 'NOT_FOUND')
    assertProblem(await service.app.inject({ method: 'PUT', url: '/v2/payments' }), 404, 'NOT_FOUND')
  })

  test('unknown payment → 404; a secret_id with a NUL character → 400, never a database error', async () => {
    assertProblem(await service.api(apiKey, { method: 'GET', url: '/v2/payments/no-such-secret' }), 404, 'NOT_FOUND')
    assertProblem(await service.api(apiKey, { method: 'GET', url: '/v2/payments/abc%00def' }), 400, 'BAD_URL')
    assertProblem(await service.api(apiKey, { method: 'GET', url: '/v2/payments/%E0%A4%A' }), 400, 'BAD_URL')
    assertProblem(await service.api(apiKey, { method: 'GET', url: `/v2/payments/${'a'.repeat(600)}` }), 414, 'URI_TOO_LONG')
  })

  test('unsupported chain → 400 UNSUPPORTED_BLOCKCHAIN (known but without RPC, and unknown)', async () => {
    for (const blockchain of ['bsc', 'solana']) {
      const body = assertProblem(await post(createBody({ blockchain })), 400, 'UNSUPPORTED_BLOCKCHAIN')
      assert.equal(body.errors?.[0]?.path, 'blockchain')
    }
  })

  test('x-api-version: 2025-10 accepted, anything else → 400 listing the supported one', async () => {
    const ok = await post(createBody(), { 'x-api-version': '2025-10' })
    assert.equal(ok.statusCode, 201, ok.body)
    for (const version of ['2024-01', 'latest', '']) {
      const body = assertProblem(await post(createBody(), { 'x-api-version': version }), 400, 'UNSUPPORTED_API_VERSION')
      assert.match(body.detail, /2025-10/)
    }
    assertProblem(
      await service.api(apiKey, { method: 'GET', url: '/v2/payments/x', headers: { 'x-api-version': '1999-01' } }),
      400,
      'UNSUPPORTED_API_VERSION',
    )
  })
})

describe('authentication', () => {
  test('missing, unknown or malformed API key → 401 UNAUTHORIZED', async () => {
    const body = createBody()
    assertProblem(await service.app.inject({ method: 'POST', url: '/v2/payments', payload: body }), 401, 'UNAUTHORIZED')
    assertProblem(await service.app.inject({ method: 'GET', url: '/v2/payments/x' }), 401, 'UNAUTHORIZED')
    for (const key of ['pw_unknown', `${apiKey}x`, apiKey.slice(0, -1), 'k'.repeat(5000)]) {
      assertProblem(await service.api(key, { method: 'POST', url: '/v2/payments', payload: body }), 401, 'UNAUTHORIZED')
    }
  })

  test('authentication comes before validation and rate limits: no hint to an unauthenticated caller', async () => {
    const res = await service.app.inject({
      method: 'POST',
      url: '/v2/payments',
      payload: '{bad',
      headers: { 'content-type': 'application/json' },
    })
    assertProblem(res, 401, 'UNAUTHORIZED')
    assert.equal(res.headers['ratelimit-limit'], undefined)
  })

  test('a revoked key is refused at once', async () => {
    const { accountId } = await service.newAccount('revoker')
    const key = (await service.admin({ method: 'POST', url: `/admin/accounts/${accountId}/api-keys` })).json<{ id: string; key: string }>()
    const first = await service.api(key.key, { method: 'GET', url: '/v2/payments/none' })
    assertProblem(first, 404, 'NOT_FOUND') // authenticated (and now cached)
    const revoked = await service.admin({ method: 'DELETE', url: `/admin/api-keys/${key.id}` })
    assert.equal(revoked.statusCode, 204)
    assertProblem(await service.api(key.key, { method: 'GET', url: '/v2/payments/none' }), 401, 'UNAUTHORIZED')
  })
})

test('the native token address is accepted in any letter case', async () => {
  for (const token of [NATIVE.toLowerCase(), NATIVE.toUpperCase().replace('0X', '0x')]) {
    const res = await post(createBody({ token }))
    assert.equal(res.statusCode, 201, res.body)
    assert.equal(res.json().token, NATIVE)
  }
})

test('a transaction hash is stored lower-case', async () => {
  const res = await post(createBody({ transaction: TX_HASH.toUpperCase().replace('0X', '0x') }))
  assert.equal(res.statusCode, 201, res.body)
  assert.equal(res.json().transaction, TX_HASH)
})

test('a deadline up to 2^53 − 1, as a string or a number, is answered as the same JSON integer', async () => {
  for (const deadline of ['9007199254740991', 9007199254740991]) {
    const res = await post(createBody({ deadline }))
    assert.equal(res.statusCode, 201, res.body)
    assert.match(res.body, /"deadline":9007199254740991[,}]/)
  }
})
