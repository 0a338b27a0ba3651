// A payment without a nonce whose trace is stored while the follower holds a block it read the pending
// trackings for before the trace existed (at the block's notification, docs/architecture.md "Matching by
// receiver"): that block is processed without the trace, so the trace's own catch-up waits until the
// follower processed it and then matches it there. The block's read is held at a real RPC proxy.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { numberToHex, parseEther, type Address, type TransactionReceipt } from 'viem'
import { deployToken, mintToken, sendNative, startAnvil, transferToken, type Anvil } from '../support/index.ts'
import { startRpcProxy, type RpcProxy } from '../support/rpc-proxy.ts'
import type { TestService } from '../support/service.ts'
import {
  createTrace,
  engineAtHead,
  freshAddress,
  lower,
  NATIVE,
  readPayment,
  startEngineService,
  waitFor,
  waitForFinal,
} from './support.ts'

let anvil: Anvil
let usdc: Address

before(async () => {
  anvil = await startAnvil()
  usdc = await deployToken(anvil, 'USD Coin', 'USDC', 6)
  await mintToken(anvil, usdc, anvil.accounts[1]!.address, 100_000_000n)
})
after(async () => anvil?.stop())

/**
 * Mines `pay` while the follower's read of its block is held (the block's pending trackings read already),
 * stores the trace `track` makes, lets the block through once the trace's check waits for the follower (or,
 * had it not waited, once it asked the latest block to look at the processed head), and returns the trace's
 * final record and the payment.
 */
async function traceStoredWhileBlockHeld(
  service: TestService,
  proxy: RpcProxy,
  apiKey: string,
  pay: () => Promise<TransactionReceipt>,
  track: (afterBlock: bigint) => Promise<string>,
) {
  await engineAtHead(service, anvil)
  const afterBlock = await anvil.publicClient.getBlockNumber()
  const blockRead = proxy.hold(
    ({ method, params }) => method === 'eth_getBlockByNumber' && params[0] === numberToHex(afterBlock + 1n) && params[1] === true,
  )
  const payment = await pay()
  assert.equal(payment.blockNumber, afterBlock + 1n)
  await blockRead.arrived

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

  const secretId = await track(afterBlock)
  await waitFor("the trace's check", async () => (checkWaited || latestAsked() ? true : undefined))
  blockRead.release()
  return { record: await waitForFinal(service, apiKey, secretId), payment }
}

async function withService(work: (service: TestService, proxy: RpcProxy, apiKey: string) => Promise<void>) {
  const proxy = await startRpcProxy(anvil.rpcUrl)
  const service = await startEngineService(anvil, { chain: { rpc: [proxy.url] } })
  try {
    await work(service, proxy, (await service.newAccount()).apiKey)
  } finally {
    await service.close()
    await proxy.close()
  }
}

test('the first trace on a chain, stored while a block read without it waits, is caught up in that block', () =>
  withService(async (service, proxy, apiKey) => {
    const receiver = freshAddress()
    const { record, payment } = await traceStoredWhileBlockHeld(
      service,
      proxy,
      apiKey,
      () => transferToken(anvil, usdc, anvil.accounts[1]!, receiver, 2_000_000n),
      (afterBlock) => createTrace(service, apiKey, { token: usdc, receiver, amount: '2', afterBlock }),
    )
    assert.equal(record.status, 'success')
    assert.equal(record.transaction, lower(payment.transactionHash))
  }))

test('a native trace stored while a block read with token traces alone waits is paid by a transfer without a log there', () =>
  withService(async (service, proxy, apiKey) => {
    // Pending and never paid: the chain has token traces, no native one, when the block is read.
    const unpaid = await createTrace(service, apiKey, {
      token: usdc,
      receiver: freshAddress(),
      amount: '1',
      afterBlock: await anvil.publicClient.getBlockNumber(),
    })
    const receiver = freshAddress()
    const { record, payment } = await traceStoredWhileBlockHeld(
      service,
      proxy,
      apiKey,
      () => sendNative(anvil, anvil.accounts[2]!, receiver, parseEther('0.25')),
      (afterBlock) => createTrace(service, apiKey, { token: NATIVE, receiver, amount: '0.25', afterBlock }),
    )
    assert.equal(record.status, 'success')
    assert.equal(record.transaction, lower(payment.transactionHash))
    assert.equal((await readPayment(service, apiKey, unpaid)).status, 'pending')
  }))
