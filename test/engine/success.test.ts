// End to end through the real service: a payment tracked through the API is judged on chain by the
// engine (native and ERC-20, direct and through a router, trace and named transaction, mismatch).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { parseEther, type Address } from 'viem'
import type { Tracking } from '../../src/domain/tracking.ts'
import {
  deployRouter,
  deployToken,
  mintToken,
  routerPayNative,
  sendNative,
  startAnvil,
  testTokenAbi,
  transferToken,
  type Anvil,
} from '../support/index.ts'
import type { TestService } from '../support/service.ts'
import { createPayment, freshAddress, lower, readPayment, startEngineService, waitFor, waitForFinal } from './support.ts'

let anvil: Anvil
let service: TestService
let apiKey: string
let usdc: Address
let router: Address
const completed: Tracking[] = []

before(async () => {
  anvil = await startAnvil()
  router = await deployRouter(anvil)
  usdc = await deployToken(anvil, 'USD Coin', 'USDC', 6)
  await mintToken(anvil, usdc, anvil.accounts[2]!.address, 1_000_000_000n)
  service = await startEngineService(anvil)
  service.events.on('completed', (tracking) => completed.push(tracking))
  ;({ apiKey } = await service.newAccount())
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

test('native trace: created pending, then success with confirmed_at once the payment is mined', async () => {
  const sender = anvil.accounts[1]!
  const receiver = freshAddress()
  const { request, record } = await createPayment(service, apiKey, anvil, sender, { receiver, amount: '1.5' })
  assert.equal(record.status, 'pending')
  assert.equal(record.confirmed_at, null)

  const receipt = await sendNative(anvil, sender, receiver, parseEther('1.5'))
  const final = await waitForFinal(service, apiKey, request.secret_id)
  assert.equal(final.status, 'success')
  assert.equal(final.transaction, lower(receipt.transactionHash))
  assert.ok(typeof final.confirmed_at === 'string' && !Number.isNaN(Date.parse(final.confirmed_at)))
  // The event follows the commit once its callback is handed to the sender (at most 20 ms): the API may show
  // the success first.
  await waitFor('the completed event', async () =>
    completed.some((t) => t.secretId === request.secret_id && t.status === 'success') ? true : undefined,
  )
})

test('ERC-20 with the transaction named: success, and an overpayment succeeds too', async () => {
  const sender = anvil.accounts[2]!
  const receiver = freshAddress()
  const nonce = await anvil.publicClient.getTransactionCount({ address: sender.address })
  const afterBlock = await anvil.publicClient.getBlockNumber()
  const hash = await sender.wallet.writeContract({
    address: usdc,
    abi: testTokenAbi,
    functionName: 'transfer',
    args: [receiver, 2_500_000n],
  })
  const { request } = await createPayment(service, apiKey, anvil, sender, {
    receiver,
    token: usdc,
    amount: '2',
    nonce,
    after_block: afterBlock,
    transaction: hash,
  })
  const final = await waitForFinal(service, apiKey, request.secret_id)
  assert.equal(final.status, 'success')
  assert.equal(final.transaction, lower(hash))
})

test('native through a router with a fee receiver: internal calls count', async () => {
  const sender = anvil.accounts[3]!
  const receiver = freshAddress()
  const feeReceiver = freshAddress()
  const { request } = await createPayment(service, apiKey, anvil, sender, {
    receiver,
    amount: '0.0000000000000009',
    fee_receiver: feeReceiver,
    fee_amount: '0.0000000000000001',
  })
  await routerPayNative(anvil, router, sender, { receiver, feeReceiver, value: 1000n, feeAmount: 100n })
  const final = await waitForFinal(service, apiKey, request.secret_id)
  assert.equal(final.status, 'success', JSON.stringify(final))
})

test('a payment of less than the amount fails with AMOUNT_MISMATCH', async () => {
  const sender = anvil.accounts[2]!
  const receiver = freshAddress()
  const { request } = await createPayment(service, apiKey, anvil, sender, { receiver, token: usdc, amount: '10' })
  const receipt = await transferToken(anvil, usdc, sender, receiver, 9_000_000n)
  const final = await waitForFinal(service, apiKey, request.secret_id)
  assert.equal(final.status, 'failed')
  assert.equal(final.failed_reason, 'AMOUNT_MISMATCH')
  assert.equal(final.transaction, lower(receipt.transactionHash))
  assert.equal(final.confirmed_at, null)
})

test('a payment to another receiver fails with RECEIVER_MISMATCH', async () => {
  const sender = anvil.accounts[4]!
  const { request } = await createPayment(service, apiKey, anvil, sender, { receiver: freshAddress(), amount: '1' })
  await sendNative(anvil, sender, freshAddress(), parseEther('1'))
  const final = await waitForFinal(service, apiKey, request.secret_id)
  assert.equal(final.failed_reason, 'RECEIVER_MISMATCH')
})

test('metrics report the chain head, processed blocks and RPC calls by method', async () => {
  const processed = service.engine.runner('ethereum')?.follower?.state.head?.number
  assert.ok(processed !== undefined)
  const response = await service.app.inject({ method: 'GET', url: '/metrics' })
  const text = response.body
  assert.match(text, /paywatch_chain_head_block\{chain="ethereum"\} \d+/)
  assert.match(text, /paywatch_chain_head_age_seconds\{chain="ethereum"\} \d+/)
  assert.match(text, /paywatch_chain_blocks_processed_total\{chain="ethereum"\} [1-9]\d*/)
  assert.match(text, /paywatch_rpc_requests_total\{chain="ethereum",method="eth_getBlockByNumber"\} [1-9]\d*/)
  assert.match(text, /paywatch_trackings_pending\{chain="ethereum"\} \d+/)
  const ready = await waitFor('readyz to report the followed head', async () => {
    const body = (await service.app.inject({ method: 'GET', url: '/readyz' })).json()
    return body.chains?.[0]?.head !== undefined ? body : undefined
  })
  assert.equal(ready.chains[0].name, 'ethereum')
  assert.equal(ready.chains[0].ok, true)
  assert.equal(typeof ready.chains[0].headAgeSeconds, 'number')
  // the record read back is the one the engine wrote
  assert.ok((await readPayment(service, apiKey, completed[0]!.secretId)).status !== 'pending')
})
