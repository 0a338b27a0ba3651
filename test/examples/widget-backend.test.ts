// examples/widget-backend.ts against the real service on Anvil, fed exactly the bodies DePay's widgets send
// (test/support/depay-widgets.ts): the trace, the track with its transaction, the poll (404 until the user
// is released, then 200 {status, forward_to}), with the widget's own socket on /cable beside it.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import { getAddress, parseEther, type Address } from 'viem'
import { createClient } from '@paywatch/client'
import { startWidgetBackend } from '../../examples/widget-backend.ts'
import { paymentRequestOf, pollAnswerOf, WidgetBodyError } from '../../examples/widget-bodies.ts'
import {
  replayWidgetSocket,
  widget12Identifier,
  widget13Identifier,
  widgetPollBody,
  widgetTrackBody,
  type ReplayedWidget,
  type WidgetRoute,
  type WidgetVersion,
} from '../support/depay-widgets.ts'
import { sendNative, startAnvil, type Anvil } from '../support/index.ts'
import type { TestService } from '../support/service.ts'
import { freshAddress, NATIVE, startEngineService, waitFor } from '../engine/support.ts'

let anvil: Anvil
let service: TestService
let baseUrl: string
let apiKey: string
let nonceless: boolean
const closers: (() => Promise<unknown>)[] = []
const widgets: ReplayedWidget[] = []

before(async () => {
  anvil = await startAnvil()
  service = await startEngineService(anvil, { callbacks: { pollMs: 20 } })
  ;({ apiKey } = await service.newAccount())
  baseUrl = await service.listen()
  // Whether POST /v2/payments takes a payment without a nonce (docs/api.md, "Payments without a nonce"):
  // a body invalid anyway (the amount) shows, without creating anything, whether the missing nonce is a problem too.
  const probe = await service.api(apiKey, {
    method: 'POST',
    url: '/v2/payments',
    payload: { blockchain: 'ethereum', sender: freshAddress(), receiver: freshAddress(), token: NATIVE, amount: 'x', after_block: '1' },
  })
  nonceless = !(probe.json().errors as { path: string }[]).some((error) => /nonce/.test(error.path))
})
after(async () => {
  for (const widget of widgets) widget.abandon()
  for (const close of closers) await close()
  await service?.close()
  await anvil?.stop()
})

async function backend(receiver: Address, decide: 'now' | 'later'): Promise<string> {
  const server: Server = await startWidgetBackend(
    {
      paywatchUrl: baseUrl,
      apiKey,
      receiver,
      secret: randomBytes(16).toString('hex'),
      allowOrigin: 'https://shop.example',
      callbacks: { decide: () => decide, forwardTo: (record) => `https://shop.example/thanks/${record.secret_id}` },
    },
    0,
  )
  closers.push(() => new Promise((resolve) => server.close(resolve)))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const post = async (url: string, body: unknown) => {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const text = await response.text()
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined, headers: response.headers }
}

/** A native payment of 0.01 to `receiver`, as the widget's route holds it. */
const routeOf = (sender: Address, receiver: Address): WidgetRoute => ({
  blockchain: 'ethereum',
  fromAddress: getAddress(sender),
  toAddress: getAddress(receiver),
  fromToken: NATIVE,
  fromAmount: parseEther('0.01'),
  fromDecimals: 18,
  toToken: NATIVE,
  toAmount: parseEther('0.01'),
  toDecimals: 18,
})

/** The widget's whole journey through the backend: trace, socket, payment, track, polls until released. */
async function journey(version: WidgetVersion, senderIndex: number, decide: 'now' | 'later') {
  const sender = anvil.accounts[senderIndex]!
  const receiver = freshAddress()
  const shop = await backend(receiver, decide)
  const route = routeOf(sender.address, receiver)
  const nonce = BigInt(await anvil.publicClient.getTransactionCount({ address: sender.address }))
  const afterBlock = await anvil.publicClient.getBlockNumber()
  // Widget 13 (web3-payments 15): Math.ceil(new Date()) + 1800 * 1000; widget 12 sends one too.
  const deadline = Math.ceil(Date.now()) + 1800 * 1000
  const fields = { afterBlock, deadline, nonce }

  const traced = await post(`${shop}/track`, widgetTrackBody(version, route, fields))
  assert.equal(traced.status, 201, JSON.stringify(traced.body))
  assert.equal(traced.headers.get('access-control-allow-origin'), 'https://shop.example')
  const identifier = version === 12 ? widget12Identifier('ethereum', route.fromAddress, nonce) : widget13Identifier(route, deadline)
  const pollBody = widgetPollBody(version, route, { ...fields, transaction: `0x${'00'.repeat(32)}` })
  assert.equal((await post(`${shop}/poll`, pollBody)).status, 404, 'tracked, not released: the widget polls again')
  const widget = replayWidgetSocket(version, baseUrl, identifier)
  widgets.push(widget)
  await widget.until((frame) => frame.type === 'confirm_subscription')

  const receipt = await sendNative(anvil, sender, receiver, parseEther('0.01'))
  const tracked = await post(`${shop}/track`, widgetTrackBody(version, route, { ...fields, transaction: receipt.transactionHash }))
  assert.equal(tracked.status, 201, JSON.stringify(tracked.body))
  await widget.stopped
  const released = widget.messages.at(-1)!
  assert.equal(released.release, true)
  assert.deepEqual(widget.closeCodes, [1000])
  const polled = await waitFor('the poll to answer 200', async () => {
    const answer = await post(`${shop}/poll`, { ...pollBody, transaction: receipt.transactionHash })
    return answer.status === 200 ? answer : (assert.equal(answer.status, 404), undefined)
  })
  assert.deepEqual(polled.body, { status: 'success', forward_to: released.forward_to })
  return { sender, receiver, nonce, deadline, receipt, released }
}

test('widget 12 bodies: trace and track create one tracking with the nonce; the poll answers 200 once released', async () => {
  const { sender, receiver, nonce, receipt, released } = await journey(12, 1, 'now')
  assert.match(String(released.forward_to), /^https:\/\/shop\.example\/thanks\/widget-[0-9a-f]{64}$/)
  const secretId = String(released.forward_to).split('/').at(-1)!
  const record = await createClient({ baseUrl, apiKey }).payments.get(secretId)
  assert.equal(record.status, 'success')
  assert.equal(record.sender, getAddress(sender.address))
  assert.equal(record.nonce, nonce.toString())
  assert.equal(record.receiver, getAddress(receiver))
  assert.equal(record.token, NATIVE)
  assert.equal(record.amount, '0.01')
  assert.equal(record.transaction, receipt.transactionHash)
})

test('widget 13 bodies (no nonce, a deadline): tracked, released after a 202, the poll answers 200', async (t) => {
  if (!nonceless) return t.skip('POST /v2/payments of this build needs a nonce: widget 13 bodies cannot be tracked yet')
  const { receiver, receipt, released } = await journey(13, 2, 'later')
  assert.equal(released.forward_to, null, 'released through the API after a 202: no forward_to')
  const records = await service.database.db
    .selectFrom('trackings')
    .select(['receiver', 'transaction', 'deadline'])
    .where('receiver', '=', receiver.toLowerCase())
    .execute()
  assert.equal(records.length, 1, 'the trace and the track are one tracking')
  assert.equal(records[0]!.transaction, receipt.transactionHash)
})

test('before the release the poll answers 404; bad bodies are 400; a body of another shop is refused', async () => {
  const receiver = freshAddress()
  const shop = await backend(receiver, 'now')
  const route = routeOf(freshAddress(), receiver)
  const fields = { afterBlock: 1n, deadline: 1_767_227_400_000, nonce: 3n, transaction: `0x${'ab'.repeat(32)}` }
  assert.equal((await post(`${shop}/poll`, widgetPollBody(12, route, fields))).status, 404, 'never tracked')
  assert.equal((await post(`${shop}/poll`, widgetPollBody(13, route, fields))).status, 404)
  assert.equal((await post(`${shop}/poll`, widgetPollBody(13, { ...route, toAddress: freshAddress() }, fields))).status, 400)
  for (const bad of [
    {},
    { ...widgetTrackBody(12, route, fields), to_amount: '1.5' },
    { ...widgetTrackBody(13, route, fields), deadline: undefined },
  ]) {
    const answer = await post(`${shop}/track`, bad)
    assert.equal(answer.status, 400, JSON.stringify(bad))
  }
  const notJson = await fetch(`${shop}/track`, { method: 'POST', body: '{' })
  assert.equal(notJson.status, 400)
  const preflight = await fetch(`${shop}/track`, { method: 'OPTIONS' })
  assert.equal(preflight.status, 204)
  assert.equal(preflight.headers.get('access-control-allow-headers'), 'content-type')
})

test('the body mapping: to_* become token and amount, fees in the token’s decimals, nonce or deadline', () => {
  const options = { receiver: '0x1111111111111111111111111111111111111111', secret: 's', callback: 'https://shop.example/callback' }
  const route: WidgetRoute = {
    ...routeOf('0x2222222222222222222222222222222222222222', options.receiver as Address),
    toToken: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
    toAmount: 12_500_000n,
    toDecimals: 6,
    feeAmount: 250_000n,
    feeReceiver: '0x3333333333333333333333333333333333333333',
  }
  const v13 = paymentRequestOf(widgetTrackBody(13, route, { afterBlock: 100n, deadline: 1_767_227_400_000 }) as never, options)
  assert.deepEqual(
    { ...v13, secret_id: undefined },
    {
      blockchain: 'ethereum',
      sender: route.fromAddress,
      receiver: options.receiver,
      token: route.toToken,
      amount: '12.5',
      after_block: '100',
      deadline: '1767227400000',
      fee_amount: '0.25',
      fee_receiver: route.feeReceiver,
      secret_id: undefined,
      callback: options.callback,
    },
  )
  // Widget 12 sends the nonce and a fee amount without its receiver: the shop's configured one is used.
  const v12 = paymentRequestOf(
    widgetTrackBody(12, route, { afterBlock: 100n, deadline: 1_767_227_400, nonce: 5n, transaction: `0x${'cd'.repeat(32)}` }) as never,
    { ...options, feeReceiver: '0x4444444444444444444444444444444444444444' },
  )
  assert.equal(v12.nonce, '5')
  assert.equal(v12.transaction, `0x${'cd'.repeat(32)}`)
  assert.equal(v12.fee_receiver, '0x4444444444444444444444444444444444444444')
  assert.notEqual(v12.secret_id, v13.secret_id)
  assert.throws(
    () => paymentRequestOf({ ...widgetTrackBody(13, route, { afterBlock: 1n, deadline: 1 }), to_decimals: '6' } as never, options),
    WidgetBodyError,
  )
  // The poll answer: released only; forward_to of a failure only with forward_on_failure.
  const record = { status: 'failed', release: true, forward_to: 'https://shop.example/retry', forward_on_failure: false } as never
  assert.deepEqual(pollAnswerOf(record), { status: 'failed', forward_to: null })
  assert.equal(pollAnswerOf({ status: 'success', release: false, forward_to: null } as never), undefined)
})
