// The newest block's logs read ahead in place of its receipts (docs/architecture.md, "A block's logs for
// its receipts"), end to end: in one block, a token payment that logged succeeds from its logs, and one
// whose transfer reverted (no log) has its receipt read and fails FAILED, as a reverted transaction does.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { Address } from 'viem'
import { deployToken, mintToken, startAnvil, testTokenAbi, type Anvil } from '../support/index.ts'
import type { TestService } from '../support/service.ts'
import { createPayment, engineAtHead, freshAddress, lower, rpcRequests, startEngineService, waitForFinal } from './support.ts'

let anvil: Anvil
let service: TestService
let apiKey: string
let usdc: Address

before(async () => {
  anvil = await startAnvil()
  usdc = await deployToken(anvil, 'USD Coin', 'USDC', 6)
  await mintToken(anvil, usdc, anvil.accounts[1]!.address, 10_000_000n)
  service = await startEngineService(anvil)
  ;({ apiKey } = await service.newAccount())
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

test('in one block, the payment that logged succeeds from the logs; the reverted one has its receipt read and fails', async () => {
  const [payer, broke] = [anvil.accounts[1]!, anvil.accounts[2]!]
  const [paid, unpaid] = [freshAddress(), freshAddress()]
  const good = await createPayment(service, apiKey, anvil, payer, { receiver: paid, token: usdc, amount: '2' })
  const bad = await createPayment(service, apiKey, anvil, broke, { receiver: unpaid, token: usdc, amount: '2' })
  // The read ahead follows what the last block saw pending: a block after the creates, processed, makes
  // that the two payments whatever blocks the engine had processed before them.
  await anvil.testClient.mine({ blocks: 1 })
  await engineAtHead(service, anvil)
  const logsBefore = await rpcRequests(service, 'eth_getLogs')

  await anvil.testClient.setAutomine(false)
  const transfer = (from: typeof payer, to: Address) =>
    from.wallet.writeContract({ address: usdc, abi: testTokenAbi, functionName: 'transfer', args: [to, 2_000_000n], gas: 100_000n })
  const paying = await transfer(payer, paid)
  // `broke` holds no USDC: mined, reverted, no log.
  const reverting = await transfer(broke, unpaid)
  await anvil.testClient.mine({ blocks: 1 })
  await anvil.testClient.setAutomine(true)
  assert.equal((await anvil.publicClient.getTransactionReceipt({ hash: reverting })).status, 'reverted')

  const success = await waitForFinal(service, apiKey, good.request.secret_id)
  assert.equal(success.status, 'success')
  assert.equal(success.transaction, lower(paying))
  const failed = await waitForFinal(service, apiKey, bad.request.secret_id)
  assert.equal(failed.status, 'failed')
  assert.equal(failed.failed_reason, 'FAILED')
  assert.equal(failed.transaction, lower(reverting))
  assert.ok((await rpcRequests(service, 'eth_getLogs')) > logsBefore, "the block's logs were read ahead")
})
