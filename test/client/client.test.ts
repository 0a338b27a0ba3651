// @paywatch/client (docs/api.md, "Integrator kit"): the checked-in types are what the code generates now;
// verifyCallback agrees with the service's signatures and DePay's verifier; verifyWebhook agrees with the
// standardwebhooks package; the client runs create → success → verified callback → release against the
// real service on Anvil, and throws PaywatchError with the problem.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { parseEther } from 'viem'
import { Webhook } from 'standardwebhooks'
import { verify as depayVerify } from '@depay/js-verify-signature'
import { createClient, PaywatchError, verifyCallback, verifyWebhook, type PaymentRequest } from '@paywatch/client'
import { generateClientTypes, specFile, typesFile } from '../../scripts/client-types.ts'
import { sendNative, startAnvil, type Anvil } from '../support/index.ts'
import type { TestService } from '../support/service.ts'
import { freshAddress, NATIVE, startEngineService } from '../engine/support.ts'
import { eventually, startReceiver, type Receiver } from '../callbacks/support.ts'

let anvil: Anvil
let service: TestService
let receiver: Receiver
let baseUrl: string
let apiKey: string
let publicKey: string

before(async () => {
  anvil = await startAnvil()
  receiver = await startReceiver((request) => (request.path === '/later' ? { status: 202 } : { status: 200 }))
  service = await startEngineService(anvil, { callbacks: { pollMs: 50 } })
  ;({ apiKey } = await service.newAccount())
  baseUrl = await service.listen()
  publicKey = await (await fetch(`${baseUrl}/v2/public-key`)).text()
})
after(async () => {
  await service?.close()
  await receiver?.close()
  await anvil?.stop()
})

test('the checked-in spec and types are a fresh generation (npm run client:types)', async () => {
  const fresh = await generateClientTypes()
  assert.equal(readFileSync(specFile, 'utf8'), fresh.spec, 'packages/client/openapi.json is stale: npm run client:types')
  assert.equal(readFileSync(typesFile, 'utf8'), fresh.types, 'packages/client/src/openapi-types.ts is stale: npm run client:types')
})

test('create → success → verified callback → release, typed; errors are PaywatchError with the problem', async () => {
  const client = createClient({ baseUrl, apiKey })
  const sender = anvil.accounts[1]!
  const to = freshAddress()
  const request: PaymentRequest = {
    blockchain: 'ethereum',
    sender: sender.address,
    nonce: String(await anvil.publicClient.getTransactionCount({ address: sender.address })),
    receiver: to,
    token: NATIVE,
    amount: '0.25',
    after_block: String(await anvil.publicClient.getBlockNumber()),
    secret_id: `client-${randomBytes(8).toString('hex')}`,
    callback: `${receiver.url}/later`,
  }
  const created = await client.payments.create(request)
  assert.equal(created.status, 'pending')
  assert.equal(created.secret_id, request.secret_id)

  await sendNative(anvil, sender, to, parseEther('0.25'))
  const [got] = await receiver.waitFor(1, 20_000)
  const signature = got!.headers['x-signature'] as string
  assert.equal(await verifyCallback({ body: got!.body, signature, publicKey }), true, 'string body')
  assert.equal(await verifyCallback({ body: Buffer.from(got!.body, 'latin1'), signature, publicKey }), true, 'bytes')
  assert.equal(await depayVerify({ signature, data: got!.body, publicKey }), true, "DePay's verifier agrees")
  assert.equal(await verifyCallback({ body: got!.body.replace('success', 'failed!'), signature, publicKey }), false)
  assert.equal(await verifyCallback({ body: got!.body, signature: 'not*base64', publicKey }), false)

  const record = await eventually(async () => {
    const current = await client.payments.get(request.secret_id!)
    return current.status === 'success' && current
  })
  const deliveries = await eventually(async () => {
    const listed = await client.payments.deliveries(request.secret_id!)
    return listed.deliveries[0]?.state === 'accepted' && listed
  })
  assert.equal(deliveries.deliveries[0]!.attempts[0]!.status_code, 202)
  assert.equal(record.release, false, '202: waiting for the release')
  const released = await client.payments.release({
    blockchain: 'ethereum',
    transaction: record.transaction!,
    sender: record.sender!,
    nonce: record.nonce!,
    secret_id: request.secret_id,
  })
  assert.equal(released.release, true)

  const missing = await client.payments.get('no-such-payment').then(
    () => assert.fail('a missing payment must throw'),
    (error: unknown) => error,
  )
  assert.ok(missing instanceof PaywatchError)
  assert.equal(missing.status, 404)
  assert.equal(missing.problem.code, 'NOT_FOUND')
  const invalid = await client.payments.create({ ...request, amount: 'lots' }).catch((error: unknown) => error)
  assert.ok(invalid instanceof PaywatchError)
  assert.equal(invalid.problem.code, 'VALIDATION_FAILED')
  assert.ok(invalid.problem.errors?.some((e) => e.path === 'amount'))
  const unauthorized = await createClient({ baseUrl, apiKey: 'pw_wrong' })
    .payments.get(request.secret_id!)
    .catch((error: unknown) => error)
  assert.ok(unauthorized instanceof PaywatchError && unauthorized.status === 401)
})

test('verifyCallback: the x-signature of a record read from the API', async () => {
  const response = await fetch(`${baseUrl}/v2/public-key`, { headers: { accept: 'application/json' } })
  const { public_key } = (await response.json()) as { public_key: string }
  assert.equal(public_key, publicKey)
  const sample = '{"status":"success","amount":"1.5"}'
  const signature = await service.callbacks.signer.sign(sample, null)
  assert.equal(await verifyCallback({ body: sample, signature, publicKey }), true)
  assert.equal(await verifyCallback({ body: new TextEncoder().encode(sample), signature, publicKey }), true)
  assert.equal(await verifyCallback({ body: `${sample} `, signature, publicKey }), false)
})

test('verifyWebhook: Standard Webhooks signatures made by the standardwebhooks package', async () => {
  const secret = `whsec_${randomBytes(24).toString('base64')}`
  const previous = `whsec_${randomBytes(24).toString('base64')}`
  const body = '{"status":"success"}'
  const now = Date.now()
  const timestamp = Math.floor(now / 1000)
  const signed = (key: string, at = timestamp) => new Webhook(key).sign('msg_1', new Date(at * 1000), body)
  const headers = (signature: string, at = timestamp) => ({
    'webhook-id': 'msg_1',
    'webhook-timestamp': String(at),
    'webhook-signature': signature,
  })
  assert.equal(await verifyWebhook({ body, headers: headers(signed(secret)), secret, now }), true)
  assert.equal(await verifyWebhook({ body: Buffer.from(body), headers: new Headers(headers(signed(secret))), secret, now }), true)
  // During a rotation two signatures travel; either one under our secret is enough.
  assert.equal(await verifyWebhook({ body, headers: headers(`${signed(previous)} ${signed(secret)}`), secret, now }), true)
  assert.equal(await verifyWebhook({ body, headers: headers(signed(previous)), secret, now }), false)
  assert.equal(await verifyWebhook({ body: `${body} `, headers: headers(signed(secret)), secret, now }), false)
  const old = timestamp - 301
  assert.equal(await verifyWebhook({ body, headers: headers(signed(secret, old), old), secret, now }), false, 'older than 5 minutes')
  assert.equal(await verifyWebhook({ body, headers: headers(signed(secret, timestamp - 299), timestamp - 299), secret, now }), true)
  assert.equal(await verifyWebhook({ body, headers: { 'webhook-id': 'msg_1' }, secret, now }), false)
  // And the package accepts what it signed, under the same headers: both sides read the spec alike.
  assert.doesNotThrow(() => new Webhook(secret).verify(body, headers(signed(secret))))
})
