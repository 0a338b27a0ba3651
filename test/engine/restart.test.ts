// Restart mid-way: the service stops with a payment short of confirmations and another not mined
// yet; blocks are mined while it is down; the restarted service resumes right after the last block
// it processed (none skipped, none processed twice) and judges both.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseEther } from 'viem'
import { mine, sendNative } from '../support/index.ts'
import type { TestService } from '../support/service.ts'
import { useRestartableServices } from './lasting-services.ts'
import { createPayment, engineAtHead, freshAddress, lower, readPayment, waitForFinal } from './support.ts'

const lasting = useRestartableServices()
const start = () => lasting.start()

const processedBlocks = async (service: TestService): Promise<number> => {
  const text = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
  return Number(/paywatch_chain_blocks_processed_total\{chain="ethereum"\} (\d+)/.exec(text)?.[1] ?? 0)
}

test('a restarted service resumes after the last processed block', async () => {
  const { anvil } = lasting
  const first = await start()
  const { apiKey } = await first.newAccount()
  const alice = anvil.accounts[1]!
  const bob = anvil.accounts[2]!
  const receiver = freshAddress()

  const confirming = await createPayment(first, apiKey, anvil, alice, { receiver, amount: '1', confirmations: 3 })
  const later = await createPayment(first, apiKey, anvil, bob, { receiver, amount: '2' })
  const paid = await sendNative(anvil, alice, receiver, parseEther('1'))
  await engineAtHead(first, anvil)
  assert.equal((await readPayment(first, apiKey, confirming.request.secret_id)).status, 'pending')
  const stoppedAt = first.engine.runner('ethereum')!.follower!.state.head!.number
  await lasting.stop(first)

  // While nobody follows the chain: the second payment is mined, and enough blocks for the first.
  const paidLater = await sendNative(anvil, bob, receiver, parseEther('2'))
  await mine(anvil, 3)
  const head = await anvil.publicClient.getBlockNumber()

  const second = await start()
  const confirmed = await waitForFinal(second, apiKey, confirming.request.secret_id)
  assert.equal(confirmed.status, 'success')
  assert.equal(confirmed.transaction, lower(paid.transactionHash))
  const found = await waitForFinal(second, apiKey, later.request.secret_id)
  assert.equal(found.status, 'success')
  assert.equal(found.transaction, lower(paidLater.transactionHash))

  await engineAtHead(second, anvil)
  assert.equal(await processedBlocks(second), Number(head - stoppedAt), 'exactly the blocks after the last processed one')
})
