// DePay's widgets against the real service on Anvil: their `/cable` sockets replayed from their code
// (test/support/depay-widgets.ts), payments made on chain, users released by a callback answered 200 or by
// a 202 and POST /v2/payments/release. The widget 13 identifier names no nonce: the trackings are created
// with one (and with `deadline`, which the widget channel finds them by; set on the row directly as well, so
// that this holds whether or not POST /v2/payments stores it).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { parseEther, type Address } from 'viem'
import { startReceiver, type Receiver } from '../callbacks/support.ts'
import { connectWelcomed, type CableFrame, type TestCableClient } from '../support/cable-client.ts'
import { replayWidgetSocket, widget12Identifier, widget13Identifier, type ReplayedWidget } from '../support/depay-widgets.ts'
import { mine, sendNative, startAnvil, type Anvil, type AnvilAccount } from '../support/index.ts'
import type { TestService } from '../support/service.ts'
import { createPayment, freshAddress, startEngineService, waitFor, waitForFinal } from '../engine/support.ts'

let anvil: Anvil
let service: TestService
let callbacks: Receiver
let baseUrl: string
let merchant: { apiKey: string }
let phisher: { apiKey: string }
const clients: TestCableClient[] = []
const widgets: ReplayedWidget[] = []

before(async () => {
  anvil = await startAnvil()
  callbacks = await startReceiver((request) => {
    if (request.path === '/later') return { status: 202 }
    const forwardTo = request.path === '/phish' ? 'https://phish.example/login' : 'https://shop.example/paid'
    return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ forward_to: forwardTo }) }
  })
  service = await startEngineService(anvil, { callbacks: { pollMs: 20 } })
  baseUrl = await service.listen()
  merchant = await service.newAccount('merchant')
  phisher = await service.newAccount('phisher')
})
after(async () => {
  for (const widget of widgets) widget.abandon()
  await Promise.all(clients.map((client) => client.close()))
  await service?.close()
  await callbacks?.close()
  await anvil?.stop()
})

const deadlineSoon = () => Math.floor(Date.now() / 1000) + 3600

/** A widget 13 socket for (sender, receiver, deadline), subscribed. */
async function widget13(sender: Address, receiver: Address, deadline: number): Promise<{ widget: ReplayedWidget; identifier: string }> {
  const identifier = widget13Identifier({ blockchain: 'ethereum', fromAddress: sender, toAddress: receiver }, deadline)
  const widget = replayWidgetSocket(13, baseUrl, identifier)
  widgets.push(widget)
  await widget.until((frame) => frame.type === 'confirm_subscription' && frame.identifier === identifier)
  return { widget, identifier }
}

/** A plain client on the same identifier that never closes by itself: what the server does shows on it. */
async function observer(identifier: string): Promise<TestCableClient> {
  const client = await connectWelcomed(baseUrl)
  clients.push(client)
  client.send({ command: 'subscribe', identifier })
  assert.deepEqual(await client.next(), { identifier, type: 'confirm_subscription' })
  return client
}

/** POST /v2/payments for the sender's next nonce, with a deadline (also set on the row, see above). */
async function track(apiKey: string, sender: AnvilAccount, receiver: Address, deadline: number, fields: Record<string, unknown>) {
  const { request } = await createPayment(service, apiKey, anvil, sender, { receiver, amount: '0.01', deadline, ...fields })
  await service.database.db
    .updateTable('trackings')
    .set({ deadline: String(deadline) })
    .where('secret_id', '=', request.secret_id)
    .execute()
  return request
}

const status = (message: Record<string, unknown>) => typeof message.status === 'string'
const isMessage = (frame: CableFrame) => frame.message !== undefined

async function releaseThroughApi(apiKey: string, secretId: string) {
  const record = await waitForFinal(service, apiKey, secretId)
  const response = await service.api(apiKey, {
    method: 'POST',
    url: '/v2/payments/release',
    payload: { blockchain: 'ethereum', transaction: record.transaction, sender: record.sender, nonce: record.nonce, secret_id: secretId },
  })
  assert.equal(response.statusCode, 200, response.body)
}

for (const answer of [200, 202] as const) {
  for (const subscribe of ['before', 'after'] as const) {
    test(`widget 13, subscribed ${subscribe} its tracking exists, released by ${answer === 200 ? 'a callback answered 200' : '202 + POST /v2/payments/release'}`, async () => {
      const sender = anvil.accounts[answer === 200 ? (subscribe === 'before' ? 1 : 2) : subscribe === 'before' ? 3 : 4]!
      const receiver = freshAddress()
      const deadline = deadlineSoon()
      let opened: { widget: ReplayedWidget; identifier: string } | undefined
      if (subscribe === 'before') opened = await widget13(sender.address, receiver, deadline)
      const request = await track(merchant.apiKey, sender, receiver, deadline, {
        confirmations: 2,
        callback: `${callbacks.url}${answer === 200 ? '/ok' : '/later'}`,
      })
      const { widget, identifier } = opened ?? (await widget13(sender.address, receiver, deadline))
      const server = await observer(identifier)
      // Its own keep-alive, as every 3 s: no answer, the socket stays.
      widget.keepAlive()
      widget.keepAlive()

      await sendNative(anvil, sender, receiver, parseEther('0.01'))
      await widget.until((frame) => JSON.stringify(frame.message) === JSON.stringify({ confirmations: { required: 2, passed: 1 } }))
      await mine(anvil, 1)
      if (answer === 202) {
        await widget.until((frame) => frame.message !== undefined && status(frame.message as Record<string, unknown>))
        await releaseThroughApi(merchant.apiKey, request.secret_id)
      }
      await widget.stopped

      const finals = widget.messages.filter(status)
      const forwardTo = answer === 200 ? 'https://shop.example/paid' : null
      assert.deepEqual(finals, [
        { status: 'success', release: false, forward_to: null, failed_reason: null },
        { status: 'success', release: true, forward_to: forwardTo, failed_reason: null },
      ])
      assert.deepEqual(widget.closeCodes, [1000], 'one socket, closed normally')
      assert.equal(widget.sockets, 1, 'no reconnect')
      assert.ok(
        !widget.frames.some(
          (frame) => frame.type !== 'ping' && !isMessage(frame) && frame.type !== 'welcome' && frame.type !== 'confirm_subscription',
        ),
      )
      // The server itself closes a socket whose every subscription was told its release.
      assert.equal((await server.closed).code, 1000)
      assert.deepEqual(server.pending().filter(isMessage).at(-1)?.message, finals.at(-1))
    })
  }
}

test('widget 13 opened after the payment completed (202): told the state at once, then the release', async () => {
  const sender = anvil.accounts[5]!
  const receiver = freshAddress()
  const deadline = deadlineSoon()
  const request = await track(merchant.apiKey, sender, receiver, deadline, { callback: `${callbacks.url}/later` })
  await sendNative(anvil, sender, receiver, parseEther('0.01'))
  await waitForFinal(service, merchant.apiKey, request.secret_id)
  await waitFor('the 202 answer', async () => (callbacks.received.some((got) => got.body.includes(request.secret_id)) ? true : undefined))
  const { widget } = await widget13(sender.address, receiver, deadline)
  await widget.until((frame) => frame.message !== undefined)
  assert.deepEqual(widget.messages, [{ status: 'success', release: false, forward_to: null, failed_reason: null }])
  await releaseThroughApi(merchant.apiKey, request.secret_id)
  await widget.stopped
  assert.deepEqual(widget.messages.at(-1), { status: 'success', release: true, forward_to: null, failed_reason: null })
  assert.deepEqual(widget.closeCodes, [1000])
})

test('another account tracking the same (sender, receiver, deadline) later: nothing of it reaches the widget', async () => {
  const sender = anvil.accounts[6]!
  const receiver = freshAddress()
  const deadline = deadlineSoon()
  const { widget, identifier } = await widget13(sender.address, receiver, deadline)
  const server = await observer(identifier)
  const own = await track(merchant.apiKey, sender, receiver, deadline, {
    callback: `${callbacks.url}/later`,
    forward_to: 'https://shop.example/a',
  })
  // The phisher's tracking is released at once by its 200 answer, with its own forward_to.
  const phished = await track(phisher.apiKey, sender, receiver, deadline, { callback: `${callbacks.url}/phish` })
  await sendNative(anvil, sender, receiver, parseEther('0.01'))
  await waitFor('the phisher to be released', async () => {
    const record = (await service.api(phisher.apiKey, { method: 'GET', url: `/v2/payments/${phished.secret_id}` })).json()
    return record.release === true ? record : undefined
  })
  await widget.until((frame) => frame.message !== undefined && status(frame.message as Record<string, unknown>))
  await releaseThroughApi(merchant.apiKey, own.secret_id)
  await widget.stopped
  assert.deepEqual(widget.messages.filter(status), [
    { status: 'success', release: false, forward_to: 'https://shop.example/a', failed_reason: null },
    { status: 'success', release: true, forward_to: 'https://shop.example/a', failed_reason: null },
  ])
  const seen = JSON.stringify([...widget.frames, ...server.pending()])
  assert.ok(!seen.includes('phish'), 'no forward_to of the other account')
  assert.equal((await server.closed).code, 1000)
})

test('widget 12 (nonce) closes without a code after its release by a 200 callback: it does not loop', async () => {
  const sender = anvil.accounts[7]!
  const receiver = freshAddress()
  const nonce = await anvil.publicClient.getTransactionCount({ address: sender.address })
  const widget = replayWidgetSocket(12, baseUrl, widget12Identifier('ethereum', sender.address, nonce))
  widgets.push(widget)
  await widget.until((frame) => frame.type === 'confirm_subscription')
  await track(merchant.apiKey, sender, receiver, deadlineSoon(), { callback: `${callbacks.url}/ok` })
  await sendNative(anvil, sender, receiver, parseEther('0.01'))
  await widget.stopped
  assert.deepEqual(widget.messages.at(-1), {
    status: 'success',
    release: true,
    forward_to: 'https://shop.example/paid',
    failed_reason: null,
  })
  assert.deepEqual(widget.closeCodes, [1000], 'the close it saw is the server’s 1000, not its own code-less one (1005)')
  assert.equal(widget.sockets, 1, 'no reconnect, no second stream of the same messages')
})
