// Reversal events on Anvil: a success at 1 confirmation whose transaction a reorg takes off the chain
// sends payment.reverted (opt-in integrations only); mined again, payment.reconfirmed.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { parseEther, type Hex } from 'viem'
import { mine, startAnvil, waitForReceipt, type Anvil } from '../support/index.ts'
import type { TestService } from '../support/service.ts'
import { createPayment, engineAtHead, freshAddress, readPayment, startEngineService, waitFor, waitForFinal } from '../engine/support.ts'
import { startReceiver, verifiedBy, type Receiver } from '../callbacks/support.ts'
import { standardVerifies } from './support.ts'

let anvil: Anvil
let service: TestService
let receiver: Receiver
let apiKey: string
let accountId: string

before(async () => {
  anvil = await startAnvil()
  receiver = await startReceiver(() => ({ status: 200 }))
  // Blocks are final 20 deep: a success at 1 confirmation is watched.
  service = await startEngineService(anvil, { chain: { finalityDepth: 20 }, callbacks: { pollMs: 25 } })
  ;({ apiKey, accountId } = await service.newAccount())
})
after(async () => {
  await service?.close()
  await anvil?.stop()
  await receiver?.close()
})

const integration = async (reversalEvents: boolean) =>
  (
    await service.admin({ method: 'POST', url: `/admin/accounts/${accountId}/integrations`, payload: { reversal_events: reversalEvents } })
  ).json<{ id: string; public_key: string; webhook_secret: string }>()

/** Pays at 1 confirmation with a transaction signed once (so the same one can be mined again); waits for success. */
async function paidAtOneConfirmation(sender: (typeof anvil.accounts)[number], integrationId: string, path: string) {
  const to = freshAddress()
  const { request } = await createPayment(service, apiKey, anvil, sender, {
    receiver: to,
    amount: '1',
    confirmations: 1,
    callback: `${receiver.url}${path}`,
    integration_id: integrationId,
  })
  const raw: Hex = await sender.wallet.signTransaction(await sender.wallet.prepareTransactionRequest({ to, value: parseEther('1') }))
  const hash = await anvil.rpc<Hex>('eth_sendRawTransaction', [raw])
  await waitForReceipt(anvil, hash)
  assert.equal((await waitForFinal(service, apiKey, request.secret_id)).status, 'success')
  return { request, raw, hash }
}

const received = (path: string) => receiver.received.filter((got) => got.path === path)
const eventsOf = (path: string) => received(path).filter((got) => got.headers['x-paywatch-event'] !== undefined)

test('opted in: reorged out after success → payment.reverted; mined again → payment.reconfirmed; reverted_at on the record', async () => {
  const opted = await integration(true)
  const { request, raw } = await paidAtOneConfirmation(anvil.accounts[1]!, opted.id, '/opted')
  await waitFor('the success callback', async () => (received('/opted').length >= 1 ? true : undefined))
  assert.equal((await readPayment(service, apiKey, request.secret_id)).reverted_at, undefined, 'never reverted: no field')

  // The payment's block is replaced; the transaction is not in the new branch.
  await anvil.reorg(1)
  await mine(anvil, 1)
  await engineAtHead(service, anvil)
  const [reverted] = await waitFor('payment.reverted', async () => (eventsOf('/opted').length >= 1 ? eventsOf('/opted') : undefined))
  assert.equal(reverted!.headers['x-paywatch-event'], 'payment.reverted')
  const body = JSON.parse(reverted!.body)
  assert.deepEqual(Object.keys(body), ['event', 'payment'])
  assert.equal(body.event, 'payment.reverted')
  assert.equal(body.payment.status, 'success', 'the status stays success')
  assert.equal(body.payment.secret_id, request.secret_id)
  assert.match(body.payment.reverted_at, /^\d{4}-\d\d-\d\dT/)
  assert.ok(await verifiedBy(reverted!, opted.public_key), "DePay's verifier")
  assert.ok(standardVerifies(reverted!, opted.webhook_secret), 'standardwebhooks')
  const record = await readPayment(service, apiKey, request.secret_id)
  assert.equal(record.status, 'success')
  assert.equal(record.reverted_at, body.payment.reverted_at)

  // The same transaction is mined again and gets its confirmation.
  await anvil.rpc('eth_sendRawTransaction', [raw])
  await mine(anvil, 1)
  const events = await waitFor('payment.reconfirmed', async () => (eventsOf('/opted').length >= 2 ? eventsOf('/opted') : undefined))
  assert.equal(events[1]!.headers['x-paywatch-event'], 'payment.reconfirmed')
  const again = JSON.parse(events[1]!.body)
  assert.equal(again.event, 'payment.reconfirmed')
  assert.equal(again.payment.reverted_at, null)
  assert.ok(await verifiedBy(events[1]!, opted.public_key))
  assert.ok(standardVerifies(events[1]!, opted.webhook_secret))
  assert.equal((await readPayment(service, apiKey, request.secret_id)).reverted_at, null, 'null once reconfirmed')
  // The receiver has them; their outcomes are recorded right after.
  const kinds = await waitFor('the three deliveries recorded', async () => {
    const log = await service.api(apiKey, { method: 'GET', url: `/v2/payments/${request.secret_id}/deliveries` })
    const states = log
      .json<{ deliveries: { event?: string; state: string }[] }>()
      .deliveries.map((d) => `${d.event ?? 'payment'}:${d.state}`)
      .sort()
    return states.every((state) => state.endsWith(':delivered')) ? states : undefined
  })
  assert.deepEqual(kinds, ['payment.reconfirmed:delivered', 'payment.reverted:delivered', 'payment:delivered'])
})

test('without the opt-in nothing is sent; the event is in the delivery log and the metrics', async () => {
  const plain = await integration(false)
  const { request } = await paidAtOneConfirmation(anvil.accounts[2]!, plain.id, '/plain')
  await waitFor('the success callback', async () => (received('/plain').length >= 1 ? true : undefined))
  await anvil.reorg(1)
  await mine(anvil, 1)
  await engineAtHead(service, anvil)
  const skipped = await waitFor('the skipped event in the log', async () => {
    const log = await service.api(apiKey, { method: 'GET', url: `/v2/payments/${request.secret_id}/deliveries` })
    return log.json<{ deliveries: { event?: string; state: string; attempt_count: number }[] }>().deliveries.find((d) => d.event)
  })
  assert.equal(skipped.event, 'payment.reverted')
  assert.equal(skipped.state, 'skipped')
  assert.equal(skipped.attempt_count, 0)
  await mine(anvil, 2)
  await engineAtHead(service, anvil)
  assert.equal(received('/plain').length, 1, 'only the payment callback was sent')
  const metrics = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
  assert.match(metrics, /paywatch_payment_reversal_events_total\{event="payment.reverted",sent="false"\} 1\b/)
})
