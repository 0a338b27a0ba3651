import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { systemClock } from '../../src/common/clock.ts'
import { checkCallbackUrl, ForbiddenCallbackError, forbiddenAddressReason } from '../../src/callbacks/address-guard.ts'
import { createCallbackSender } from '../../src/callbacks/sender.ts'
import { startAnvil, type Anvil } from '../support/index.ts'
import { startTestService, type TestService } from '../support/service.ts'
import { eventually, insertCompleted, startReceiver, type Receiver } from './support.ts'

test('forbidden address ranges', () => {
  const forbidden = [
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '169.254.1.1',
    '100.64.0.1',
    '100.127.255.254',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'fd00:ec2::254',
    '::ffff:127.0.0.1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::a00:1',
    '2002:c0a8:0101::1',
    'ff02::1',
    // IPv6 forms that embed a forbidden IPv4 address: IPv4-compatible, SIIT, NAT64 and 6to4.
    '::127.0.0.1',
    '::7f00:1',
    '::10.0.0.1',
    '::ffff:0:127.0.0.1',
    '::ffff:0:7f00:1',
    '::ffff:0:a9fe:a9fe',
    '64:ff9b::127.0.0.1',
    '64:ff9b::192.168.1.1',
    '2002:7f00:1::1',
    '2002:a00:1:ffff::1',
    // The rest of the special-purpose registry: IETF protocol assignments, documentation, segment routing, dummy prefix.
    '2001:2::1',
    '2001:10::1',
    '2001:20::1',
    '2001:1::1',
    '3fff::1',
    '3fff:fff::1',
    '5f00::1',
    '100:0:0:1::1',
  ]
  for (const address of forbidden) assert.ok(forbiddenAddressReason(address), `${address} is forbidden`)
  assert.equal(forbiddenAddressReason('169.254.169.254'), 'cloud metadata')
  assert.equal(forbiddenAddressReason('fd00:ec2::254'), 'cloud metadata')
  assert.equal(forbiddenAddressReason('168.63.129.16'), 'cloud metadata')
  assert.equal(forbiddenAddressReason('100.64.0.1'), 'carrier-grade NAT')
  // 6to4 relay anycast (deprecated by RFC 7526): the nearest relay answers, whichever network it is in.
  assert.equal(forbiddenAddressReason('192.88.99.1'), '6to4 relay anycast')
  assert.equal(forbiddenAddressReason('::ffff:192.88.99.255'), '6to4 relay anycast')
  for (const address of [
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700::1111',
    '64:ff9b::808:808',
    '::ffff:8.8.8.8',
    '168.63.129.17',
    '2002:808:808::1',
    '2001:4860::8888',
    '2a00:1450::1',
  ]) {
    assert.equal(forbiddenAddressReason(address), null, `${address} is public`)
  }
})

test('create-time check: literal addresses and names that resolve to forbidden addresses', async () => {
  assert.ok(await checkCallbackUrl('http://127.0.0.1:8080/cb', systemClock))
  assert.ok(await checkCallbackUrl('http://[::1]/cb', systemClock))
  assert.ok(await checkCallbackUrl('http://localhost/cb', systemClock))
  assert.ok(await checkCallbackUrl('http://0x7f.1/cb', systemClock), 'WHATWG URL normalises 0x7f.1 to 127.0.0.1')
  assert.equal(await checkCallbackUrl('https://8.8.8.8/cb', systemClock), undefined)
})

test('the sender refuses forbidden addresses at connection time and follows no redirects', async () => {
  const target = await startReceiver(() => ({ status: 200 }))
  const redirecting = await startReceiver(() => ({ status: 302, headers: { location: `${target.url}/elsewhere` } }))
  const guarded = createCallbackSender({ timeoutMs: 2000, allowPrivate: false })
  const open = createCallbackSender({ timeoutMs: 2000, allowPrivate: true })
  try {
    const port = new URL(target.url).port
    for (const url of [`${target.url}/cb`, `http://localhost:${port}/cb`]) {
      const result = await guarded.send(url, '{}', { 'content-type': 'application/json' })
      assert.ok(result.failure instanceof ForbiddenCallbackError, url)
      assert.match(result.error ?? '', /^refused: .*loopback/)
    }
    assert.equal(target.received.length, 0, 'nothing reached the private address')
    const redirected = await open.send(`${redirecting.url}/cb`, '{}', { 'content-type': 'application/json' })
    assert.equal(redirected.statusCode, 302)
    assert.equal(target.received.length, 0, 'the redirect was not followed')
  } finally {
    guarded.close()
    open.close()
    await target.close()
    await redirecting.close()
  }
})

let anvil: Anvil
let service: TestService
let receiver: Receiver
before(async () => {
  anvil = await startAnvil()
  receiver = await startReceiver(() => ({ status: 200 }))
  service = await startTestService({
    chains: { ethereum: { rpc: [anvil.rpcUrl], chainId: anvil.chainId } },
    env: { PAYWATCH_ALLOW_PRIVATE_CALLBACKS: 'false', PAYWATCH_RATE_RPS: '100000', PAYWATCH_RATE_PARALLEL: '1000' },
    callbacks: { pollMs: 25 },
  })
})
after(async () => {
  await service?.close()
  await receiver?.close()
  await anvil?.stop()
})

const paymentBody = (nonce: number, callback: string) => ({
  blockchain: 'ethereum',
  sender: anvil.accounts[1]!.address,
  nonce,
  receiver: anvil.accounts[2]!.address,
  token: '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE',
  amount: '1',
  after_block: 0,
  secret_id: `ssrf-${nonce}`,
  callback,
})

test('POST /v2/payments refuses callbacks to private, loopback, link-local and metadata addresses (400)', async () => {
  const { apiKey } = await service.newAccount()
  const refused = [
    'http://127.0.0.1:3000/cb',
    'http://localhost/cb',
    'http://[::1]/cb',
    'http://10.0.0.5/cb',
    'http://192.168.0.10/cb',
    'http://169.254.169.254/latest/meta-data',
    'http://[fd00:ec2::254]/',
    'http://100.64.1.1/cb',
    'http://[fe80::1]/cb',
    'http://[::ffff:127.0.0.1]/cb',
    `http://[::127.0.0.1]:${new URL(receiver.url).port}/`,
    `http://[::ffff:0:127.0.0.1]:${new URL(receiver.url).port}/`,
    'http://[64:ff9b::10.0.0.1]/cb',
    'http://[2002:c0a8:101::1]/cb',
    'http://[::ffff:0:a9fe:a9fe]/latest/meta-data',
  ]
  for (const [i, callback] of refused.entries()) {
    const res = await service.api(apiKey, { method: 'POST', url: '/v2/payments', payload: paymentBody(i, callback) })
    assert.equal(res.statusCode, 400, `${callback}: ${res.body}`)
    assert.equal(res.json().code, 'VALIDATION_FAILED')
    assert.equal(res.json().errors[0].path, 'callback')
  }
  const scheme = await service.api(apiKey, { method: 'POST', url: '/v2/payments', payload: paymentBody(50, 'ftp://example.com/cb') })
  assert.equal(scheme.statusCode, 400)
  assert.equal(scheme.json().errors[0].path, 'callback')
  const ok = await service.api(apiKey, { method: 'POST', url: '/v2/payments', payload: paymentBody(51, 'https://8.8.8.8/cb') })
  assert.equal(ok.statusCode, 201, ok.body)
})

test('delivery time: a callback that leads to a private address is refused, recorded and dead', async () => {
  const { accountId, apiKey } = await service.newAccount()
  // Stored directly: as if the name had resolved to a public address when the tracking was created.
  const tracking = await insertCompleted(service.database.db, accountId, { callback: `http://localhost:${new URL(receiver.url).port}/cb` })
  const [delivery] = await eventually(async () => {
    const res = await service.api(apiKey, { method: 'GET', url: `/v2/payments/${tracking.secretId}/deliveries` })
    const list = res.json().deliveries
    return list[0]?.state === 'dead' && list
  })
  assert.equal(delivery.attempts.length, 1)
  assert.equal(delivery.attempts[0].outcome, 'refused')
  assert.match(delivery.attempts[0].error, /loopback/)
  assert.equal(receiver.received.length, 0)
})
