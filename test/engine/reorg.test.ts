// Reorgs with anvil_reorg: a transaction reorganized out before it has enough confirmations does not
// succeed (the tracking is searched for again), and succeeds once it is included again.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { parseEther, type Hex } from 'viem'
import { mine, startAnvil, waitForReceipt, type Anvil } from '../support/index.ts'
import type { TestService } from '../support/service.ts'
import { createPayment, engineAtHead, freshAddress, lower, readPayment, startEngineService, waitFor, waitForFinal } from './support.ts'

let anvil: Anvil
let service: TestService
let apiKey: string

before(async () => {
  anvil = await startAnvil()
  service = await startEngineService(anvil)
  ;({ apiKey } = await service.newAccount())
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

const reorgCount = async (): Promise<number> => {
  const text = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
  return Number(/paywatch_chain_reorgs_total\{chain="ethereum"\} (\d+)/.exec(text)?.[1] ?? 0)
}

test('dropped before enough confirmations: not success; re-included: success', async () => {
  const sender = anvil.accounts[1]!
  const receiver = freshAddress()
  const progress: number[] = []
  service.events.on('progress', (event) => progress.push(event.passed))
  const { request } = await createPayment(service, apiKey, anvil, sender, { receiver, amount: '1', confirmations: 3 })
  // Signed once, so the very same transaction can be included again after the reorg.
  const raw: Hex = await sender.wallet.signTransaction(
    await sender.wallet.prepareTransactionRequest({ to: receiver, value: parseEther('1') }),
  )
  const hash = await anvil.rpc<Hex>('eth_sendRawTransaction', [raw])
  const mined = await waitForReceipt(anvil, hash)
  await mine(anvil, 1)
  await engineAtHead(service, anvil)
  assert.equal((await readPayment(service, apiKey, request.secret_id)).status, 'pending', '2 of 3 confirmations')
  const reorgsBefore = await reorgCount()

  // Replace the payment's block and the one after it; the transaction is not re-included.
  await anvil.reorg(2)
  await assert.rejects(anvil.publicClient.getTransactionReceipt({ hash }))
  await mine(anvil, 2)
  await engineAtHead(service, anvil)
  assert.equal(await reorgCount(), reorgsBefore + 1, 'the reorg was seen')
  assert.equal((await readPayment(service, apiKey, request.secret_id)).status, 'pending', 'not success: the payment is gone')
  const match = await service.database.db.selectFrom('tracking_matches').selectAll().execute()
  assert.equal(match.length, 0, 'searching again')
  assert.equal(progress.at(-1), 0, 'progress fell back to 0')

  // Included again, in a later block.
  await anvil.rpc('eth_sendRawTransaction', [raw])
  const again = await waitForReceipt(anvil, hash)
  assert.ok(again.blockNumber > mined.blockNumber)
  await engineAtHead(service, anvil)
  assert.equal((await readPayment(service, apiKey, request.secret_id)).status, 'pending')
  await mine(anvil, 2)
  const final = await waitForFinal(service, apiKey, request.secret_id)
  assert.equal(final.status, 'success')
  assert.equal(final.transaction, lower(hash))
  assert.equal(await anvil.publicClient.getBlockNumber(), again.blockNumber + 2n)
})

test('a reorg that moves the payment to another block: confirmations count from the new block', async () => {
  const sender = anvil.accounts[2]!
  const receiver = freshAddress()
  const { request } = await createPayment(service, apiKey, anvil, sender, { receiver, amount: '1', confirmations: 3 })
  const raw: Hex = await sender.wallet.signTransaction(
    await sender.wallet.prepareTransactionRequest({ to: receiver, value: parseEther('1') }),
  )
  const hash = await anvil.rpc<Hex>('eth_sendRawTransaction', [raw])
  const first = await waitForReceipt(anvil, hash)
  await mine(anvil, 1)
  await engineAtHead(service, anvil)
  // Depth 2 from the payment's block; the payment lands in the second new block (one later).
  await anvil.reorg(2, [[raw, 1]])
  const moved = await anvil.publicClient.getTransactionReceipt({ hash })
  assert.equal(moved.blockNumber, first.blockNumber + 1n)
  await mine(anvil, 1)
  await engineAtHead(service, anvil)
  assert.equal((await readPayment(service, apiKey, request.secret_id)).status, 'pending', '2 of 3 in the new branch')
  await mine(anvil, 1)
  const final = await waitForFinal(service, apiKey, request.secret_id)
  assert.equal(final.status, 'success')
  const stored = await waitFor('the block window to hold the new branch', async () => {
    const row = await service.database.db
      .selectFrom('chain_blocks')
      .select('hash')
      .where('chain', '=', 'ethereum')
      .where('number', '=', moved.blockNumber.toString())
      .executeTakeFirst()
    return row
  })
  assert.equal(stored.hash, moved.blockHash)
})
