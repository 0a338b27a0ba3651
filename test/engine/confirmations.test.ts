// Confirmations and finality: `confirmations: N` counts the inclusion block as the first; `finalized`
// waits for the RPC's finalized tag (Anvil with one slot per epoch: finalized = head − 2) or, when the
// chain sets `finalityDepth`, for that many blocks below the head. Progress is published on the way.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { parseEther } from 'viem'
import { mine, sendNative, startAnvil, type Anvil } from '../support/index.ts'
import type { TestService } from '../support/service.ts'
import { createPayment, engineAtHead, freshAddress, lower, readPayment, startEngineService, waitForFinal } from './support.ts'

describe('confirmations: 3', () => {
  let anvil: Anvil
  let service: TestService
  let apiKey: string
  const progress: { secretId: string; required: number; passed: number }[] = []

  before(async () => {
    anvil = await startAnvil({ slotsInAnEpoch: 1 })
    service = await startEngineService(anvil)
    service.events.on('progress', (event) =>
      progress.push({ secretId: event.tracking.secretId, required: event.required, passed: event.passed }),
    )
    ;({ apiKey } = await service.newAccount())
  })
  after(async () => {
    await service?.close()
    await anvil?.stop()
  })

  test('pending at 1 and 2 confirmations, success at the 3rd', async () => {
    const sender = anvil.accounts[1]!
    const receiver = freshAddress()
    const { request } = await createPayment(service, apiKey, anvil, sender, { receiver, amount: '1', confirmations: 3 })
    const receipt = await sendNative(anvil, sender, receiver, parseEther('1'))
    await engineAtHead(service, anvil)
    assert.equal((await readPayment(service, apiKey, request.secret_id)).status, 'pending', 'pending at 1 confirmation')
    await mine(anvil, 1)
    await engineAtHead(service, anvil)
    assert.equal((await readPayment(service, apiKey, request.secret_id)).status, 'pending', 'pending at 2 confirmations')
    await mine(anvil, 1)
    const final = await waitForFinal(service, apiKey, request.secret_id)
    assert.equal(final.status, 'success')
    assert.equal(final.transaction, lower(receipt.transactionHash))
    assert.equal(await anvil.publicClient.getBlockNumber(), receipt.blockNumber + 2n, 'succeeded with the 3rd block, not later')
    const mine3 = progress.filter((p) => p.secretId === request.secret_id).map((p) => `${p.passed}/${p.required}`)
    assert.deepEqual(mine3, ['1/3', '2/3'])
  })

  test('finalized: success once the inclusion block is at or below the RPC finalized tag', async () => {
    const sender = anvil.accounts[2]!
    const receiver = freshAddress()
    const { request } = await createPayment(service, apiKey, anvil, sender, { receiver, amount: '1', commitment: 'finalized' })
    const receipt = await sendNative(anvil, sender, receiver, parseEther('1'))
    await mine(anvil, 1)
    await engineAtHead(service, anvil)
    // head = inclusion + 1, finalized = head − 2: not yet
    assert.equal((await readPayment(service, apiKey, request.secret_id)).status, 'pending')
    await mine(anvil, 1)
    const final = await waitForFinal(service, apiKey, request.secret_id)
    assert.equal(final.status, 'success')
    assert.equal((await anvil.publicClient.getBlock({ blockTag: 'finalized' })).number, receipt.blockNumber)
  })
})

describe('finalityDepth set in the configuration', () => {
  let anvil: Anvil
  let service: TestService
  let apiKey: string

  before(async () => {
    // The RPC's own tag would say "finalized at genesis" for a long time (32 slots per epoch).
    anvil = await startAnvil()
    service = await startEngineService(anvil, { chain: { finalityDepth: 3 } })
    ;({ apiKey } = await service.newAccount())
  })
  after(async () => {
    await service?.close()
    await anvil?.stop()
  })

  test('finalized = that many blocks below the head', async () => {
    const sender = anvil.accounts[3]!
    const receiver = freshAddress()
    const { request } = await createPayment(service, apiKey, anvil, sender, { receiver, amount: '1', commitment: 'finalized' })
    const receipt = await sendNative(anvil, sender, receiver, parseEther('1'))
    await mine(anvil, 2)
    await engineAtHead(service, anvil)
    assert.equal((await readPayment(service, apiKey, request.secret_id)).status, 'pending', 'head − 3 is below the inclusion block')
    await mine(anvil, 1)
    const final = await waitForFinal(service, apiKey, request.secret_id)
    assert.equal(final.status, 'success')
    assert.equal(await anvil.publicClient.getBlockNumber(), receipt.blockNumber + 3n)
  })
})
