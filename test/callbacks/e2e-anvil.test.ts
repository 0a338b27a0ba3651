// End to end: a payment registered through the API is mined on Anvil, judged by the chain engine, and
// its callback arrives at a real receiver, verified with DePay's verifier.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { parseEther } from 'viem'
import { sendNative, startAnvil, type Anvil } from '../support/index.ts'
import type { TestService } from '../support/service.ts'
import { createPayment, freshAddress, lower, readPayment, startEngineService } from '../engine/support.ts'
import { eventually, startReceiver, verifiedBy, type Receiver } from './support.ts'

let anvil: Anvil
let service: TestService
let apiKey: string
let accountId: string
let receiver: Receiver

before(async () => {
  anvil = await startAnvil()
  receiver = await startReceiver((request) =>
    request.path.startsWith('/accept') ? { status: 202 } : { status: 200, body: '{"forward_to":"https://shop.example/done"}' },
  )
  service = await startEngineService(anvil, { callbacks: { pollMs: 50 } })
  ;({ apiKey, accountId } = await service.newAccount())
})
after(async () => {
  await service?.close()
  await receiver?.close()
  await anvil?.stop()
})

test('payment mined → signed callback received and verified; 200 releases and forwards', async () => {
  const publicKey = (await service.app.inject({ method: 'GET', url: '/v2/public-key' })).body
  const sender = anvil.accounts[1]!
  const to = freshAddress()
  const { request } = await createPayment(service, apiKey, anvil, sender, {
    receiver: to,
    amount: '0.5',
    callback: `${receiver.url}/paid`,
    payload: { order: 'Bestellung Nr. 7 – Größe M' },
  })
  const receipt = await sendNative(anvil, sender, to, parseEther('0.5'))
  const [got] = await receiver.waitFor(1)
  assert.equal(await verifiedBy(got!, publicKey), true)
  const body = JSON.parse(got!.body)
  assert.equal(body.status, 'success')
  assert.equal(body.secret_id, request.secret_id)
  assert.equal(body.transaction, lower(receipt.transactionHash))
  assert.equal(body.payload.order, 'Bestellung Nr. 7 – Größe M')
  const record = await eventually(async () => {
    const current = await readPayment(service, apiKey, request.secret_id)
    return current.release === true && current
  })
  assert.equal(record.forward_to, 'https://shop.example/done')
})

test('a failed payment with an integration: callback signed with the integration key, 202 leaves release to the integrator', async () => {
  const integration = (await service.admin({ method: 'POST', url: `/admin/accounts/${accountId}/integrations`, payload: {} })).json()
  const sender = anvil.accounts[2]!
  const to = freshAddress()
  const { request } = await createPayment(service, apiKey, anvil, sender, {
    receiver: to,
    amount: '2',
    callback: `${receiver.url}/accept`,
    integration_id: integration.id,
  })
  await sendNative(anvil, sender, to, parseEther('1'))
  const got = await eventually(async () => receiver.received.find((r) => JSON.parse(r.body).secret_id === request.secret_id))
  assert.equal(await verifiedBy(got, integration.public_key), true)
  const body = JSON.parse(got.body)
  assert.equal(body.status, 'failed')
  assert.equal(body.failed_reason, 'AMOUNT_MISMATCH')
  const deliveries = await eventually(async () => {
    const res = await service.api(apiKey, { method: 'GET', url: `/v2/payments/${request.secret_id}/deliveries` })
    const list = res.json().deliveries
    return list[0]?.state === 'accepted' && list
  })
  assert.equal(deliveries[0].attempts[0].status_code, 202)
  assert.equal((await readPayment(service, apiKey, request.secret_id)).release, false)
})
