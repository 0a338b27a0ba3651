// Payments mined BEFORE they were tracked: the fast path finds them at once (named hash → receipt;
// trace → the sender's nonce, located with a binary search over the transaction count), and a
// tracking still short of confirmations is then confirmed by the blocks that follow.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { parseEther, type Address } from 'viem'
import { deployToken, mine, mintToken, sendNative, startAnvil, transferToken, type Anvil } from '../support/index.ts'
import type { TestService } from '../support/service.ts'
import { createPayment, engineAtHead, freshAddress, lower, readPayment, startEngineService, waitForFinal } from './support.ts'

let anvil: Anvil
let service: TestService
let apiKey: string
let token: Address

before(async () => {
  anvil = await startAnvil()
  token = await deployToken(anvil, 'Tether', 'USDT', 6)
  await mintToken(anvil, token, anvil.accounts[2]!.address, 1_000_000_000n)
  service = await startEngineService(anvil)
  ;({ apiKey } = await service.newAccount())
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

test('trace: the payment mined several blocks before the tracking was created is found', async () => {
  const sender = anvil.accounts[1]!
  const receiver = freshAddress()
  const afterBlock = await anvil.publicClient.getBlockNumber()
  const nonce = await anvil.publicClient.getTransactionCount({ address: sender.address })
  await mine(anvil, 3)
  const receipt = await sendNative(anvil, sender, receiver, parseEther('0.25'))
  await mine(anvil, 5)
  await engineAtHead(service, anvil)
  const { request } = await createPayment(service, apiKey, anvil, sender, { receiver, amount: '0.25', nonce, after_block: afterBlock })
  const final = await waitForFinal(service, apiKey, request.secret_id)
  assert.equal(final.status, 'success')
  assert.equal(final.transaction, lower(receipt.transactionHash))
})

test('named transaction mined before the tracking: judged from its receipt', async () => {
  const sender = anvil.accounts[2]!
  const receiver = freshAddress()
  const afterBlock = await anvil.publicClient.getBlockNumber()
  const receipt = await transferToken(anvil, token, sender, receiver, 5_000_000n)
  await mine(anvil, 2)
  await engineAtHead(service, anvil)
  const nonce = (await anvil.publicClient.getTransaction({ hash: receipt.transactionHash })).nonce
  const { request } = await createPayment(service, apiKey, anvil, sender, {
    receiver,
    token,
    amount: '6',
    nonce,
    after_block: afterBlock,
    transaction: receipt.transactionHash,
  })
  const final = await waitForFinal(service, apiKey, request.secret_id)
  assert.equal(final.status, 'failed')
  assert.equal(final.failed_reason, 'AMOUNT_MISMATCH')
})

test('found after the fact with too few confirmations: pending, then confirmed by the next blocks', async () => {
  const sender = anvil.accounts[3]!
  const receiver = freshAddress()
  const afterBlock = await anvil.publicClient.getBlockNumber()
  const nonce = await anvil.publicClient.getTransactionCount({ address: sender.address })
  const receipt = await sendNative(anvil, sender, receiver, parseEther('1'))
  await engineAtHead(service, anvil)
  const { request } = await createPayment(service, apiKey, anvil, sender, {
    receiver,
    amount: '1',
    nonce,
    after_block: afterBlock,
    confirmations: 4,
  })
  await service.engine.check(await trackingOf(request.secret_id))
  assert.equal((await readPayment(service, apiKey, request.secret_id)).status, 'pending')
  await mine(anvil, 2)
  await engineAtHead(service, anvil)
  assert.equal((await readPayment(service, apiKey, request.secret_id)).status, 'pending', '3 of 4 confirmations')
  await mine(anvil, 1)
  const final = await waitForFinal(service, apiKey, request.secret_id)
  assert.equal(final.status, 'success')
  assert.equal(final.transaction, lower(receipt.transactionHash))
})

test('trace whose nonce is not consumed yet stays pending until the payment is mined', async () => {
  const sender = anvil.accounts[4]!
  const receiver = freshAddress()
  const { request } = await createPayment(service, apiKey, anvil, sender, { receiver, amount: '1' })
  await service.engine.check(await trackingOf(request.secret_id))
  assert.equal((await readPayment(service, apiKey, request.secret_id)).status, 'pending')
  await sendNative(anvil, sender, receiver, parseEther('1'))
  assert.equal((await waitForFinal(service, apiKey, request.secret_id)).status, 'success')
})

async function trackingOf(secretId: string) {
  const row = await service.database.db.selectFrom('trackings').select('id').where('secret_id', '=', secretId).executeTakeFirstOrThrow()
  const { findPendingTracking } = await import('../../src/store/tracking-matches.ts')
  const tracking = await findPendingTracking(service.database.db, row.id)
  assert.ok(tracking, 'still pending')
  return tracking
}
