// A payment without a nonce whose trace is stored while the follower holds a block it read the pending
// trackings for before the trace existed (at the block's notification, docs/architecture.md "Matching by
// receiver"): that block is processed without the trace, so the trace's own catch-up waits until the
// follower processed it and then matches it there. The block's read is held at a real RPC proxy.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { numberToHex, type Address } from 'viem'
import { deployToken, mintToken, startAnvil, transferToken, type Anvil } from '../support/index.ts'
import { startRpcProxy } from '../support/rpc-proxy.ts'
import { engineAtHead, freshAddress, lower, startEngineService, waitFor, waitForFinal } from './support.ts'

let anvil: Anvil
let usdc: Address

before(async () => {
  anvil = await startAnvil()
  usdc = await deployToken(anvil, 'USD Coin', 'USDC', 6)
  await mintToken(anvil, usdc, anvil.accounts[1]!.address, 100_000_000n)
})
after(async () => anvil?.stop())

test('the first trace on a chain, stored while a block read without it waits, is caught up in that block', async () => {
  const proxy = await startRpcProxy(anvil.rpcUrl)
  const service = await startEngineService(anvil, { chain: { rpc: [proxy.url] } })
  try {
    const { apiKey } = await service.newAccount()
    await engineAtHead(service, anvil)
    const afterBlock = await anvil.publicClient.getBlockNumber()
    const paying = afterBlock + 1n
    const blockRead = proxy.hold(
      ({ method, params }) => method === 'eth_getBlockByNumber' && params[0] === numberToHex(paying) && params[1] === true,
    )
    const receiver = freshAddress()
    const receipt = await transferToken(anvil, usdc, anvil.accounts[1]!, receiver, 2_000_000n)
    assert.equal(receipt.blockNumber, paying)
    // The follower learned of the block and read what the chain has pending (no trace yet); the block's own read waits.
    await blockRead.arrived

    // The trace's check either waits for the follower (as it must) or, had it not, would have looked at the
    // processed head, asking the latest block first: the block is let through once one of them happened.
    const follower = service.engine.runner('ethereum')!.follower!
    const reached = follower.reached.bind(follower)
    let checkWaited = false
    follower.reached = (number) => {
      checkWaited = true
      return reached(number)
    }
    const askedBefore = proxy.requests.length
    const latestAsked = () =>
      proxy.requests
        .slice(askedBefore)
        .flatMap((r) => (Array.isArray(r.body) ? r.body : [r.body]) as { method?: string; params?: unknown[] }[])
        .some((call) => call.method === 'eth_getBlockByNumber' && call.params?.[0] === 'latest')

    const secretId = `trace-during-block-${process.pid}`
    const payload = {
      blockchain: 'ethereum',
      token: usdc,
      receiver,
      amount: '2',
      after_block: String(afterBlock),
      secret_id: secretId,
      callback: 'https://merchant.example/callback',
    }
    const created = await service.api(apiKey, { method: 'POST', url: '/v2/payments', payload })
    assert.equal(created.statusCode, 201, created.body)
    await waitFor("the trace's check", async () => (checkWaited || latestAsked() ? true : undefined))
    blockRead.release()

    const record = await waitForFinal(service, apiKey, secretId)
    assert.equal(record.status, 'success')
    assert.equal(record.transaction, lower(receipt.transactionHash))
  } finally {
    await service.close()
    await proxy.close()
  }
})
