// A ws(s) RPC URL: the follower is woken by `newHeads` notifications instead of polling. The
// polling interval is set to a minute, so only the subscription can make the engine see the payment.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { parseEther } from 'viem'
import { sendNative, startAnvil, type Anvil } from '../support/index.ts'
import type { TestService } from '../support/service.ts'
import { createPayment, freshAddress, lower, startEngineService, waitFor, waitForFinal } from './support.ts'

let anvil: Anvil
let service: TestService
let apiKey: string

before(async () => {
  anvil = await startAnvil()
  service = await startEngineService(anvil, { chain: { rpc: [anvil.wsUrl], pollingIntervalMs: 60_000 } })
  ;({ apiKey } = await service.newAccount())
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

test('newHeads over WebSocket drives the engine', async () => {
  await waitFor('the engine to follow', async () => service.engine.runner('ethereum')?.follower?.state.head)
  const sender = anvil.accounts[1]!
  const receiver = freshAddress()
  const { request } = await createPayment(service, apiKey, anvil, sender, { receiver, amount: '1', confirmations: 2 })
  const receipt = await sendNative(anvil, sender, receiver, parseEther('1'))
  await sendNative(anvil, anvil.accounts[2]!, freshAddress(), 1n)
  const final = await waitForFinal(service, apiKey, request.secret_id, 5_000)
  assert.equal(final.status, 'success')
  assert.equal(final.transaction, lower(receipt.transactionHash))
})
