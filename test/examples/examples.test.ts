// The example receivers in examples/ against the real service on Anvil: for each, a payment created with
// @paywatch/client, paid on chain, its callback verified by the example, a retried delivery answered the same
// without a second order, and the user released: at once with `forward_to` (200), or by the example's
// POST /v2/payments/release after a 202.
import assert from 'node:assert/strict'
import { constants, generateKeyPairSync, randomBytes, sign } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import { parseEther } from 'viem'
import { createClient, type PaymentRecord } from '@paywatch/client'
import { startNodeReceiver } from '../../examples/node-http.ts'
import { startFastifyReceiver } from '../../examples/fastify.ts'
import { POST } from '../../examples/next-route.ts'
import { createCallbackHandler, type ReceiverOptions } from '../../examples/receiver-core.ts'
import { Webhook } from 'standardwebhooks'
import { sendNative, startAnvil, type Anvil } from '../support/index.ts'
import type { TestService } from '../support/service.ts'
import { freshAddress, NATIVE, startEngineService } from '../engine/support.ts'
import { eventually } from '../callbacks/support.ts'

let anvil: Anvil
let service: TestService
let baseUrl: string
let apiKey: string
let accountId: string
const closers: (() => Promise<unknown>)[] = []

before(async () => {
  anvil = await startAnvil()
  service = await startEngineService(anvil, { callbacks: { pollMs: 50 } })
  ;({ apiKey, accountId } = await service.newAccount())
  baseUrl = await service.listen()
})
after(async () => {
  for (const close of closers) await close()
  await service?.close()
  await anvil?.stop()
})

/** Pays a new payment whose callback goes to `callback`; answers the record once released. */
async function payThrough(callback: string, senderIndex: number): Promise<PaymentRecord> {
  const client = createClient({ baseUrl, apiKey })
  const sender = anvil.accounts[senderIndex]!
  const to = freshAddress()
  const secretId = `example-${randomBytes(8).toString('hex')}`
  await client.payments.create({
    blockchain: 'ethereum',
    sender: sender.address,
    nonce: String(await anvil.publicClient.getTransactionCount({ address: sender.address })),
    receiver: to,
    token: NATIVE,
    amount: '0.1',
    after_block: String(await anvil.publicClient.getBlockNumber()),
    secret_id: secretId,
    callback,
  })
  await sendNative(anvil, sender, to, parseEther('0.1'))
  return eventually(async () => {
    const record = await client.payments.get(secretId)
    return record.release === true && record
  }, 20_000)
}

function optionsFor(seen: string[], decide: 'now' | 'later'): ReceiverOptions {
  return {
    paywatchUrl: baseUrl,
    apiKey,
    decide: () => decide,
    forwardTo: (record) => `https://shop.example/thanks/${record.secret_id}`,
    onPayment: (record, deliveryId) => void seen.push(`${record.secret_id} ${deliveryId}`),
  }
}

test('examples/node-http.ts: verified, answered 200 with forward_to', async () => {
  const seen: string[] = []
  const server = await startNodeReceiver(optionsFor(seen, 'now'), 0)
  closers.push(() => new Promise((resolve) => server.close(resolve)))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  const record = await payThrough(url, 1)
  assert.equal(record.forward_to, `https://shop.example/thanks/${record.secret_id}`)
  assert.equal(seen.length, 1)
  // The example saw the delivery under its id (what it deduplicates on).
  const delivery = (await createClient({ baseUrl, apiKey }).payments.deliveries(record.secret_id!)).deliveries[0]!
  assert.equal(seen[0], `${record.secret_id} ${delivery.id}`)
})

test('examples/fastify.ts: verified, answered 202, then released through the API', async () => {
  const seen: string[] = []
  const app = await startFastifyReceiver(optionsFor(seen, 'later'), 0)
  closers.push(() => app.close())
  const record = await payThrough(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/callback`, 2)
  assert.equal(record.forward_to, null, 'released by the example, not forwarded by a 200')
  const deliveries = (await createClient({ baseUrl, apiKey }).payments.deliveries(record.secret_id!)).deliveries
  assert.equal(deliveries[0]!.attempts[0]!.status_code, 202)
  assert.equal(seen.length, 1)
})

test('examples/next-route.ts: the Web Request/Response handler verifies, dedupes and forwards', async () => {
  process.env.PAYWATCH_URL = baseUrl
  process.env.PAYWATCH_API_KEY = apiKey
  const answers: number[] = []
  let lastRequest: { body: Buffer; headers: Record<string, string> } | undefined
  // A minimal host for the route handler, as Next.js would be: Node request → Web Request.
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]))
    lastRequest = { body: Buffer.concat(chunks), headers }
    const answer = await POST(new Request(`http://host${request.url}`, { method: 'POST', headers, body: new Uint8Array(lastRequest.body) }))
    answers.push(answer.status)
    response.writeHead(answer.status, Object.fromEntries([...(answer.headers as unknown as Iterable<[string, string]>)]))
    response.end(Buffer.from(await answer.arrayBuffer()))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closers.push(() => new Promise((resolve) => server.close(resolve)))
  const record = await payThrough(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/paywatch`, 3)
  assert.equal(record.forward_to, `https://shop.example/thanks/${record.secret_id}`)

  // The same delivery again (a retry): the same answer; a tampered body: refused.
  const again = await POST(
    new Request('http://host/', { method: 'POST', headers: lastRequest!.headers, body: new Uint8Array(lastRequest!.body) }),
  )
  assert.equal(again.status, 200)
  assert.deepEqual(await again.json(), { forward_to: record.forward_to })
  const tampered = Buffer.from(lastRequest!.body.toString('latin1').replace('"success"', '"failed"'), 'latin1')
  const refused = await POST(new Request('http://host/', { method: 'POST', headers: lastRequest!.headers, body: new Uint8Array(tampered) }))
  assert.equal(refused.status, 401)
  assert.deepEqual(answers, [200])
})

test('examples with a webhook secret also check webhook-signature (Standard Webhooks)', async () => {
  const secret = `whsec_${randomBytes(24).toString('base64')}`
  const seen: string[] = []
  const handle = createCallbackHandler({ ...optionsFor(seen, 'now'), webhookSecret: secret })
  const body = JSON.stringify({ status: 'success', blockchain: 'ethereum', secret_id: 'webhook-1', amount: '1' })
  const timestamp = Math.floor(Date.now() / 1000)
  const headers = (webhookSignature: string) => ({
    'x-signature': signature,
    'x-delivery-id': 'delivery-webhook-1',
    'webhook-id': 'delivery-webhook-1',
    'webhook-timestamp': String(timestamp),
    'webhook-signature': webhookSignature,
  })
  const signature = await service.callbacks.signer.sign(body, null)
  const other = `whsec_${randomBytes(24).toString('base64')}`
  const refused = await handle({ body, headers: headers(new Webhook(other).sign('delivery-webhook-1', new Date(timestamp * 1000), body)) })
  assert.equal(refused.status, 401)
  const accepted = await handle({
    body,
    headers: headers(new Webhook(secret).sign('delivery-webhook-1', new Date(timestamp * 1000), body)),
  })
  assert.equal(accepted.status, 200)
  assert.deepEqual(JSON.parse(accepted.body!), { forward_to: 'https://shop.example/thanks/webhook-1' })
  assert.deepEqual(seen, ['webhook-1 delivery-webhook-1'])
})

test("the service's own Standard Webhooks signature passes the example's check end to end", async () => {
  const rotated = await service.admin({ method: 'POST', url: `/admin/accounts/${accountId}/webhook-secret` })
  assert.equal(rotated.statusCode, 201)
  const secret = rotated.json<{ webhook_secret: string }>().webhook_secret
  const seen: string[] = []
  let webhookHeaders: Record<string, string | string[] | undefined> = {}
  const handle = createCallbackHandler({ ...optionsFor(seen, 'now'), webhookSecret: secret })
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    webhookHeaders = request.headers
    const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]))
    const answer = await handle({ body: Buffer.concat(chunks), headers })
    response.writeHead(answer.status, { 'content-type': 'application/json' })
    response.end(answer.body ?? '')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closers.push(() => new Promise((resolve) => server.close(resolve)))
  const record = await payThrough(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, 4)
  // Released at once: the example accepted both signatures the service sent.
  assert.equal(record.forward_to, `https://shop.example/thanks/${record.secret_id}`)
  assert.match(String(webhookHeaders['webhook-signature']), /^v1,/)
  assert.equal(webhookHeaders['webhook-id'], webhookHeaders['x-delivery-id'])
  assert.equal(seen.length, 1)
})

test('a receiver reads the public key again, once, when a signature fails, and logs a one-line reason when it rejects', async () => {
  // A Paywatch whose key changes (a `paywatch dev` on a fresh folder, an operator's new key): a key server of our own.
  const keys = [generateKeyPairSync('rsa', { modulusLength: 2048 }), generateKeyPairSync('rsa', { modulusLength: 2048 })]
  let current = 0
  let fetches = 0
  const keyServer = createServer((_request, response) => {
    fetches++
    response.end(keys[current]!.publicKey.export({ type: 'spki', format: 'pem' }))
  })
  await new Promise<void>((resolve) => keyServer.listen(0, '127.0.0.1', resolve))
  closers.push(() => new Promise((resolve) => keyServer.close(resolve)))
  const signed = (key: number, body: string) =>
    sign('sha256', Buffer.from(body), { key: keys[key]!.privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 64 }).toString(
      'base64url',
    )
  let now = 1_000_000
  const logged: string[] = []
  const handle = createCallbackHandler({
    paywatchUrl: `http://127.0.0.1:${(keyServer.address() as AddressInfo).port}`,
    apiKey: 'pw_unused',
    log: (line) => logged.push(line),
    now: () => now,
  })
  const callback = (key: number, id: string) => {
    const body = JSON.stringify({ status: 'success', secret_id: id, amount: '1', blockchain: 'ethereum' })
    return handle({ body, headers: { 'x-signature': signed(key, body), 'x-delivery-id': id } })
  }
  assert.equal((await callback(0, 'd1')).status, 200)
  assert.equal(fetches, 1)
  current = 1 // the service now signs with another key
  now += 60_000
  assert.equal((await callback(1, 'd2')).status, 200, 'accepted after reading the key again')
  assert.equal(fetches, 2)
  assert.deepEqual(logged, [])
  const forged = await callback(0, 'd3') // signed by the old key: no longer the service's
  assert.equal(forged.status, 401)
  assert.equal(fetches, 2, 'read again at most once per 5 s: forged requests cannot make it fetch in a loop')
  assert.equal(logged.length, 1)
  assert.match(logged[0]!, /^rejected callback d3 with 401: bad x-signature: not signed by the key of http:\S+\/v2\/public-key/)
  assert.equal((await handle({ body: '{}', headers: {} })).status, 400)
  assert.match(logged[1]!, /^rejected callback with 400: missing x-signature or x-delivery-id$/)
})
