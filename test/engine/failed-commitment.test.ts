// A failed verdict waits for the same commitment as success: an underpayment is pending (the widget
// shows its confirmations) until it has `confirmations` confirmations or is finalized, and a reorg
// before then judges the transaction that replaces it. A success whose block later leaves the chain
// stays success, but is logged, counted and announced on the tracking event bus.
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { after, before, test } from 'node:test'
import pino from 'pino'
import { parseEther, toHex, type Address } from 'viem'
import type { TrackingEventMap } from '../../src/common/tracking-events.ts'
import { FINALITY_READ_EVERY } from '../../src/engine/finality-cadence.ts'
import { startReceiver, type Receiver } from '../callbacks/support.ts'
import { connectCable, paymentIdentifier, type CableFrame, type TestCableClient } from '../support/cable-client.ts'
import { mine, sendNative, startAnvil, type Anvil, type AnvilAccount } from '../support/index.ts'
import type { TestService } from '../support/service.ts'
import { createPayment, engineAtHead, freshAddress, lower, readPayment, startEngineService, waitFor, waitForFinal } from './support.ts'

let anvil: Anvil
let service: TestService
let apiKey: string
let callbacks: Receiver
let baseUrl: string
const clients: TestCableClient[] = []
const logLines: Record<string, unknown>[] = []
const reverted: TrackingEventMap['reverted'][0][] = []

before(async () => {
  // One slot per epoch: Anvil's finalized tag is head − 2.
  anvil = await startAnvil({ slotsInAnEpoch: 1 })
  callbacks = await startReceiver()
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) logLines.push(JSON.parse(line) as Record<string, unknown>)
      done()
    },
  })
  service = await startEngineService(anvil, { callbacks: { pollMs: 20 }, logger: pino({ level: 'info' }, logStream) })
  service.events.on('reverted', (event) => reverted.push(event))
  baseUrl = await service.listen()
  ;({ apiKey } = await service.newAccount())
})
after(async () => {
  await Promise.all(clients.map((client) => client.close()))
  await service?.close()
  await callbacks?.close()
  await anvil?.stop()
})

/** A real widget subscribed to (ethereum, sender, nonce). */
async function widgetFor(sender: Address, nonce: number): Promise<{ client: TestCableClient; identifier: string }> {
  const client = await connectCable(baseUrl)
  clients.push(client)
  assert.deepEqual(await client.next(), { type: 'welcome' })
  const identifier = paymentIdentifier({ blockchain: 'ethereum', sender, nonce })
  client.send({ command: 'subscribe', identifier })
  assert.deepEqual(await client.next(), { identifier, type: 'confirm_subscription' })
  return { client, identifier }
}

const messageOf = (frame: CableFrame) => frame.message as Record<string, unknown>
const isProgress = (identifier: string, required: number, passed: number) => (frame: CableFrame) =>
  frame.identifier === identifier && JSON.stringify(frame.message) === JSON.stringify({ confirmations: { required, passed } })
const isStatus = (identifier: string) => (frame: CableFrame) =>
  frame.identifier === identifier && typeof messageOf(frame)?.status === 'string'

const callbacksOf = (secretId: string) =>
  callbacks.received.map((got) => JSON.parse(got.body) as Record<string, unknown>).filter((body) => body.secret_id === secretId)

/** The repro: an underpayment of 0.01 ETH, then a reorg of its block that puts a full payment in its place. */
async function underpaidThenReorgedIntoFullPayment(sender: AnvilAccount, fields: Record<string, unknown>) {
  const receiver = freshAddress()
  const nonce = await anvil.publicClient.getTransactionCount({ address: sender.address })
  const widget = await widgetFor(sender.address, nonce)
  const { request } = await createPayment(service, apiKey, anvil, sender, {
    receiver,
    amount: '0.01',
    callback: `${callbacks.url}/paid`,
    ...fields,
  })
  const underpaid = await sendNative(anvil, sender, receiver, parseEther('0.005'))
  await engineAtHead(service, anvil)
  // Pending, and the widget shows the failing transaction's confirmations.
  assert.equal((await readPayment(service, apiKey, request.secret_id)).status, 'pending')
  // 3 either way: 3 confirmations, or finality (the finalized tag lags 2 blocks: head − finalized + 1)
  await widget.client.next(isProgress(widget.identifier, 3, 1))

  await anvil.reorg(1, [[{ from: sender.address, to: receiver, value: toHex(parseEther('0.01')) }, 0]])
  const paying = await anvil.publicClient.getBlock({ blockNumber: underpaid.blockNumber, includeTransactions: true })
  const payment = paying.transactions.find((tx) => lower(tx.from) === lower(sender.address))
  assert.ok(payment, 'the full payment replaced the underpayment at the same height')
  assert.equal(payment.nonce, nonce)
  await mine(anvil, 2)

  const final = await waitForFinal(service, apiKey, request.secret_id)
  assert.equal(final.status, 'success', 'judged on the transaction that replaced the underpayment')
  assert.equal(final.transaction, lower(payment.hash))
  const status = await widget.client.next(isStatus(widget.identifier))
  assert.equal(messageOf(status).status, 'success')
  await waitFor('the success callback', async () => (callbacksOf(request.secret_id).length > 0 ? true : undefined))
  assert.deepEqual(
    callbacksOf(request.secret_id).map((body) => body.status),
    ['success'],
    'no failed callback was ever sent',
  )
  assert.ok(
    !widget.client.pending().some((frame) => frame.identifier === widget.identifier && messageOf(frame)?.status === 'failed'),
    'no failed widget message was ever sent',
  )
  return { request, underpaid, payment }
}

test('an underpayment reorganized into a full payment before 3 confirmations: success, never failed', async () => {
  await underpaidThenReorgedIntoFullPayment(anvil.accounts[1]!, { confirmations: 3 })
})

test('an underpayment reorganized into a full payment before finality: success, never failed', async () => {
  await underpaidThenReorgedIntoFullPayment(anvil.accounts[2]!, { commitment: 'finalized' })
})

test('an underpayment that stays canonical fails exactly at its 3rd confirmation, not a block earlier', async () => {
  const sender = anvil.accounts[3]!
  const receiver = freshAddress()
  const nonce = await anvil.publicClient.getTransactionCount({ address: sender.address })
  const widget = await widgetFor(sender.address, nonce)
  const { request } = await createPayment(service, apiKey, anvil, sender, {
    receiver,
    amount: '0.01',
    confirmations: 3,
    callback: `${callbacks.url}/paid`,
  })
  const underpaid = await sendNative(anvil, sender, receiver, parseEther('0.005'))
  await engineAtHead(service, anvil)
  await widget.client.next(isProgress(widget.identifier, 3, 1))
  await mine(anvil, 1)
  await engineAtHead(service, anvil)
  await widget.client.next(isProgress(widget.identifier, 3, 2))
  assert.equal((await readPayment(service, apiKey, request.secret_id)).status, 'pending', 'pending at 2 of 3 confirmations')
  assert.equal(callbacksOf(request.secret_id).length, 0)

  await mine(anvil, 1)
  const final = await waitForFinal(service, apiKey, request.secret_id)
  assert.equal(final.status, 'failed')
  assert.equal(final.failed_reason, 'AMOUNT_MISMATCH')
  assert.equal(final.transaction, lower(underpaid.transactionHash))
  assert.equal(await anvil.publicClient.getBlockNumber(), underpaid.blockNumber + 2n, 'failed with the 3rd block, not later')
  const status = messageOf(await widget.client.next(isStatus(widget.identifier)))
  assert.equal(status.status, 'failed')
  assert.equal(status.failed_reason, 'AMOUNT_MISMATCH')
  const [body] = await waitFor('the failed callback', async () => {
    const bodies = callbacksOf(request.secret_id)
    return bodies.length > 0 ? bodies : undefined
  })
  assert.equal(body!.status, 'failed')
  assert.equal(body!.failed_reason, 'AMOUNT_MISMATCH')
})

test('an underpayment reorganized away is searched for again, like a payment', async () => {
  const sender = anvil.accounts[4]!
  const receiver = freshAddress()
  const progress: number[] = []
  const { request } = await createPayment(service, apiKey, anvil, sender, { receiver, amount: '0.01', confirmations: 3 })
  service.events.on('progress', (event) => {
    if (event.tracking.secretId === request.secret_id) progress.push(event.passed)
  })
  await sendNative(anvil, sender, receiver, parseEther('0.005'))
  await engineAtHead(service, anvil)
  assert.equal((await readPayment(service, apiKey, request.secret_id)).status, 'pending')
  assert.deepEqual(progress, [1])

  await anvil.reorg(1)
  await mine(anvil, 3)
  await engineAtHead(service, anvil)
  assert.equal((await readPayment(service, apiKey, request.secret_id)).status, 'pending', 'the underpayment is gone: nothing to judge')
  const matches = await service.database.db.selectFrom('tracking_matches').selectAll().execute()
  assert.equal(matches.length, 0, 'the match was dropped')
  assert.equal(progress.at(-1), 0, 'progress fell back to 0')

  const payment = await sendNative(anvil, sender, receiver, parseEther('0.01'))
  await mine(anvil, 2)
  const final = await waitForFinal(service, apiKey, request.secret_id)
  assert.equal(final.status, 'success')
  assert.equal(final.transaction, lower(payment.transactionHash))
})

const revertedCount = async (): Promise<number> => {
  const text = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
  return Number(/paywatch_reverted_after_success_total\{chain="ethereum"\} (\d+)/.exec(text)?.[1] ?? 0)
}

test('a success whose block leaves the chain stays success, and is logged, counted and announced', async () => {
  const sender = anvil.accounts[5]!
  const receiver = freshAddress()
  const { request } = await createPayment(service, apiKey, anvil, sender, { receiver, amount: '0.01' })
  const paid = await sendNative(anvil, sender, receiver, parseEther('0.01'))
  const final = await waitForFinal(service, apiKey, request.secret_id)
  assert.equal(final.status, 'success')
  await mine(anvil, 1)
  await engineAtHead(service, anvil)
  const before = await revertedCount()

  // Two blocks deep: deeper than the one confirmation the success waited for.
  await anvil.reorg(2)
  await assert.rejects(anvil.publicClient.getTransactionReceipt({ hash: paid.transactionHash }))
  await mine(anvil, 1)
  await engineAtHead(service, anvil)
  const event = await waitFor('the reverted event', async () => reverted.find((e) => e.tracking.secretId === request.secret_id))
  assert.equal(event.transaction, lower(paid.transactionHash))
  assert.equal(event.blockNumber, paid.blockNumber)
  assert.equal(event.blockHash, lower(paid.blockHash))
  assert.equal(event.tracking.status, 'success')
  assert.equal(await revertedCount(), before + 1)
  const line = logLines.find((l) => l.tracking === event.tracking.id && l.msg === 'successful payment left the canonical chain')
  assert.ok(line, 'logged')
  assert.equal(line.level, 40, 'a warning')
  assert.equal(line.transaction, lower(paid.transactionHash))
  assert.equal((await readPayment(service, apiKey, request.secret_id)).status, 'success', 'success is final')
  assert.equal(reverted.filter((e) => e.tracking.secretId === request.secret_id).length, 1, 'announced once')
})

test('a success is watched only until its block is final', async () => {
  const sender = anvil.accounts[6]!
  const receiver = freshAddress()
  const { request } = await createPayment(service, apiKey, anvil, sender, { receiver, amount: '0.01' })
  await sendNative(anvil, sender, receiver, parseEther('0.01'))
  const final = await waitForFinal(service, apiKey, request.secret_id)
  assert.equal(final.status, 'success')
  const watched = () =>
    service.database.db
      .selectFrom('success_watches as w')
      .innerJoin('trackings as t', 't.id', 'w.tracking_id')
      .select('w.tracking_id')
      .where('t.secret_id', '=', request.secret_id)
      .execute()
  assert.equal((await watched()).length, 1, 'watched while its block can still be reorganized')
  // Past its finality (head − 2 here), and past the next read of the tag (one every FINALITY_READ_EVERY heads).
  await mine(anvil, 3 + FINALITY_READ_EVERY)
  await engineAtHead(service, anvil)
  await waitFor('the watch to end', async () => ((await watched()).length === 0 ? true : undefined))
  assert.equal(reverted.filter((e) => e.tracking.secretId === request.secret_id).length, 0)
})
