// Speed-up and cancel: with automine off, the named transaction is replaced by another one with the
// same nonce before a block is mined; the engine judges the replacing transaction.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { parseEther, type Hash } from 'viem'
import { mine, startAnvil, type Anvil, type AnvilAccount } from '../support/index.ts'
import type { TestService } from '../support/service.ts'
import { createPayment, freshAddress, lower, startEngineService, waitForFinal } from './support.ts'

let anvil: Anvil
let service: TestService
let apiKey: string

before(async () => {
  anvil = await startAnvil({ noMining: true })
  service = await startEngineService(anvil)
  ;({ apiKey } = await service.newAccount())
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

/** Sends a pending (unmined) transaction and a replacement with the same nonce and twice the fees. */
async function sendAndReplace(sender: AnvilAccount, original: { to: string; value: bigint }, replacement: { to: string; value: bigint }) {
  const nonce = await anvil.publicClient.getTransactionCount({ address: sender.address, blockTag: 'pending' })
  const fees = await anvil.publicClient.estimateFeesPerGas()
  const send = (tx: { to: string; value: bigint }, factor: bigint): Promise<Hash> =>
    sender.wallet.sendTransaction({
      to: tx.to as Hash,
      value: tx.value,
      nonce,
      maxFeePerGas: fees.maxFeePerGas * factor,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas * factor,
    })
  const first = await send(original, 1n)
  return { nonce, first, send: () => send(replacement, 2n) }
}

test('speed-up: the replacing transaction pays, success names its hash', async () => {
  const sender = anvil.accounts[1]!
  const receiver = freshAddress()
  const afterBlock = await anvil.publicClient.getBlockNumber()
  const { nonce, first, send } = await sendAndReplace(
    sender,
    { to: receiver, value: parseEther('1') },
    { to: receiver, value: parseEther('1') },
  )
  const { request } = await createPayment(service, apiKey, anvil, sender, {
    receiver,
    amount: '1',
    nonce,
    after_block: afterBlock,
    transaction: first,
  })
  const speedUp = await send()
  assert.notEqual(speedUp, first)
  await mine(anvil, 1)
  const final = await waitForFinal(service, apiKey, request.secret_id)
  assert.equal(final.status, 'success')
  assert.equal(final.transaction, lower(speedUp))
})

test('cancel: the replacing transaction pays nothing, TRANSACTION_MISMATCH keeps the named hash', async () => {
  const sender = anvil.accounts[2]!
  const receiver = freshAddress()
  const afterBlock = await anvil.publicClient.getBlockNumber()
  const { nonce, first, send } = await sendAndReplace(sender, { to: receiver, value: parseEther('1') }, { to: sender.address, value: 0n })
  const { request } = await createPayment(service, apiKey, anvil, sender, {
    receiver,
    amount: '1',
    nonce,
    after_block: afterBlock,
    transaction: first,
  })
  await send()
  await mine(anvil, 1)
  const final = await waitForFinal(service, apiKey, request.secret_id)
  assert.equal(final.status, 'failed')
  assert.equal(final.failed_reason, 'TRANSACTION_MISMATCH')
  assert.equal(final.transaction, lower(first))
})

test('a trace for the same nonce is judged on whichever transaction was mined', async () => {
  const sender = anvil.accounts[3]!
  const receiver = freshAddress()
  const { nonce, send } = await sendAndReplace(sender, { to: freshAddress(), value: 1n }, { to: receiver, value: parseEther('2') })
  const { request } = await createPayment(service, apiKey, anvil, sender, { receiver, amount: '2', nonce })
  const replacement = await send()
  await mine(anvil, 1)
  const final = await waitForFinal(service, apiKey, request.secret_id)
  assert.equal(final.status, 'success')
  assert.equal(final.transaction, lower(replacement))
})
