// A trace's catch-up (src/engine/trace-catch-up.ts) holds the follower's turn while it reads the blocks the
// follower passed without the trace. A trace's older blocks are searched for what can pay it: a token trace's
// by its transfers (two eth_getLogs for a payment 12 blocks back, not 12), a native trace's by the calls that
// moved value to its receiver (trace_filter: one request for a payment 100 blocks back, beyond the 64 blocks
// read one by one); the newest 4 are read one by one, by hash, so that a provider's node that answers a range
// without its newest blocks (a lagging one behind a load balancer) hides no payment. Blocks read one by one (a
// native trace's where no provider offers trace_filter) are read ahead of the one matched, so that the turn
// waits for one round trip per few blocks: while the first block's answer is held, the next ones are asked;
// released, the earlier of two payments in the range is the trace's.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { numberToHex, parseEther, type Hash } from 'viem'
import { startFaultyRpcProxy } from '../support/faulty-rpc-proxy.ts'
import { deployRouter, deployToken, mintToken, routerPayNative, testTokenAbi, type Anvil } from '../support/index.ts'
import type { ProxiedRequest, RpcProxy } from '../support/rpc-proxy.ts'
import type { TestService } from '../support/service.ts'
import {
  createTrace,
  engineAtHead,
  freshAddress,
  lower,
  NATIVE,
  rpcRequests,
  startEngineService,
  startProxiedEngine,
  type ProxiedEngine,
  waitFor,
  waitForFinal,
} from './support.ts'

let proxied: ProxiedEngine
let anvil: Anvil
let proxy: RpcProxy
let service: TestService

before(async () => {
  // The held request must not time out (and be sent again) while the test waits for the blocks after it.
  proxied = await startProxiedEngine({ chain: { rpcTimeoutMs: 60_000 } })
  ;({ anvil, proxy, service } = proxied)
})
after(async () => {
  await proxied?.close()
})

const callsOf = (request: ProxiedRequest) =>
  (Array.isArray(request.body) ? request.body : [request.body]) as { method: string; params: unknown[] }[]

const NO_TRACE_FILTER = { code: -32601, message: 'the method trace_filter does not exist/is not available' }

test('a native trace created 20 blocks late, no trace_filter: its blocks are read ahead of the one matched, and the earlier payment wins', async (t) => {
  proxy.setCallRefusal((call) => (call.method === 'trace_filter' ? NO_TRACE_FILTER : null))
  t.after(() => proxy.setCallRefusal(null))
  const { apiKey } = await service.newAccount()
  const [payer, other] = [anvil.accounts[1]!, anvil.accounts[2]!]
  const receiver = freshAddress()
  const afterBlock = await anvil.publicClient.getBlockNumber()
  // One transaction a block (automine); the 6th and the 13th blocks pay the receiver in full.
  const hashes: Hash[] = []
  for (let n = 1; n <= 20; n++) {
    const pays = n === 6 || n === 13
    hashes.push(await (pays ? payer : other).wallet.sendTransaction({ to: pays ? receiver : freshAddress(), value: parseEther('0.5') }))
  }
  await engineAtHead(service, anvil)

  const first = afterBlock + 1n
  const held = proxy.hold((call) => call.method === 'eth_getBlockByNumber' && call.params[0] === numberToHex(first))
  proxy.reset() // the follower read these blocks as they came: only the catch-up's requests from here
  const id = await createTrace(service, apiKey, { token: NATIVE, receiver, amount: '0.5', afterBlock })
  await held.arrived
  const blocksAsked = () =>
    new Set(
      proxy.requests
        .flatMap(callsOf)
        .filter((call) => call.method === 'eth_getBlockByNumber' && typeof call.params[0] === 'string' && call.params[0].startsWith('0x'))
        .map((call) => BigInt(call.params[0] as string)),
    )
  await waitFor('the next seven blocks asked while the first is held', async () => {
    const asked = blocksAsked()
    for (let n = first + 1n; n < first + 8n; n++) if (!asked.has(n)) return undefined
    return true
  })
  held.release()
  const final = await waitForFinal(service, apiKey, id)
  assert.equal(final.status, 'success')
  assert.equal(final.transaction, lower(hashes[5]!), "the 6th block's payment, not the 13th's")
})

test('a native trace created 100 blocks late: its older blocks searched by trace_filter, beyond the 64 read one by one', async () => {
  const { apiKey } = await service.newAccount()
  const [payer, other] = [anvil.accounts[1]!, anvil.accounts[2]!]
  const receiver = freshAddress()
  const router = await deployRouter(anvil)
  const afterBlock = await anvil.publicClient.getBlockNumber()
  // The 70th block pays the receiver in full through a router (an internal call), the 90th directly, the 10th in
  // part; 100 blocks in all. Read one by one, a native trace's catch-up reaches the 64th.
  await anvil.testClient.mine({ blocks: 9 })
  await other.wallet.sendTransaction({ to: receiver, value: parseEther('0.1') })
  await anvil.testClient.mine({ blocks: 59 })
  const { transactionHash: paying } = await routerPayNative(anvil, router, payer, { receiver, value: parseEther('0.5') })
  await anvil.testClient.mine({ blocks: 19 })
  await payer.wallet.sendTransaction({ to: receiver, value: parseEther('0.5') })
  await anvil.testClient.mine({ blocks: 10 })
  await engineAtHead(service, anvil)

  proxy.reset()
  const id = await createTrace(service, apiKey, { token: NATIVE, receiver, amount: '0.5', afterBlock })
  const final = await waitForFinal(service, apiKey, id)
  assert.equal(final.status, 'success')
  assert.equal(final.transaction, lower(paying), "the 70th block's payment, not the 90th's")
  const calls = proxy.requests.flatMap(callsOf)
  assert.equal(calls.filter((call) => call.method === 'trace_filter').length, 1, 'one search of the 96 older blocks')
  const blocks = calls.filter((call) => call.method === 'eth_getBlockByNumber' && call.params[1] === true)
  assert.ok(blocks.length <= 8, `the paying blocks and the newest 4 read, not 64: ${blocks.length} blocks`)
})

test('a native trace created 100 blocks late whose deadline passed before its payment: searched by trace_filter, it times out', async () => {
  const { apiKey } = await service.newAccount()
  const payer = anvil.accounts[1]!
  const receiver = freshAddress()
  const afterBlock = await anvil.publicClient.getBlockNumber()
  const start = (await anvil.publicClient.getBlock({ blockNumber: afterBlock })).timestamp
  // Blocks a second apart; the 70th pays in full, 30 s after the deadline.
  await anvil.testClient.mine({ blocks: 69, interval: 1 })
  const paying = await payer.wallet.sendTransaction({ to: receiver, value: parseEther('0.5') })
  await anvil.testClient.mine({ blocks: 30 })
  await engineAtHead(service, anvil)

  proxy.reset()
  const id = await createTrace(service, apiKey, { token: NATIVE, receiver, amount: '0.5', afterBlock, deadline: start + 40n })
  const final = await waitForFinal(service, apiKey, id)
  assert.equal(final.status, 'failed')
  assert.equal(final.failed_reason, 'TRACKING_TIMED_OUT')
  assert.notEqual(final.transaction, lower(paying))
  assert.equal(proxy.requests.flatMap(callsOf).filter((call) => call.method === 'trace_filter').length, 1, 'searched, not read one by one')
})

test('a token trace 20 blocks late: older blocks searched by its transfers, the newest 4 by hash, which a lagging range answer does not hide', async () => {
  const usdc = await deployToken(anvil, 'USD Coin', 'USDC', 6)
  await mintToken(anvil, usdc, anvil.accounts[1]!.address, 100_000_000n)
  const faulty = await startFaultyRpcProxy(anvil.rpcUrl)
  const lagging = await startEngineService(anvil, { chain: { rpc: [faulty.url] } })
  try {
    const { apiKey } = await lagging.newAccount()
    const [payer, other] = [anvil.accounts[1]!, anvil.accounts[2]!]
    const [older, newest] = [freshAddress(), freshAddress()]
    const afterBlock = await anvil.publicClient.getBlockNumber()
    // One transaction a block (each read one by one would be a block and its logs); the 12th and 15th pay `older`
    // (both found by the search: the earlier is the payment), the 20th `newest`.
    const hashes: Hash[] = []
    for (let n = 1; n <= 20; n++) {
      const to = n === 12 || n === 15 ? older : n === 20 ? newest : undefined
      hashes.push(
        to
          ? await payer.wallet.writeContract({ address: usdc, abi: testTokenAbi, functionName: 'transfer', args: [to, 5_000_000n] })
          : await other.wallet.sendTransaction({ to: freshAddress(), value: 1n }),
      )
    }
    await engineAtHead(lagging, anvil)
    // From here, a range of logs is answered as a node two blocks behind would: without the newest two.
    const hiddenFrom = afterBlock + 19n
    faulty.setRewrite(({ method, params }, result) => {
      const filter = params[0] as { fromBlock?: string } | undefined
      if (method !== 'eth_getLogs' || filter?.fromBlock === undefined || !Array.isArray(result)) return result
      return result.filter((log: { blockNumber: string }) => BigInt(log.blockNumber) < hiddenFrom)
    })

    const logsBefore = await rpcRequests(lagging, 'eth_getLogs')
    const olderId = await createTrace(lagging, apiKey, { token: usdc, receiver: older, amount: '5', afterBlock })
    assert.equal((await waitForFinal(lagging, apiKey, olderId)).transaction, lower(hashes[11]!), "the 12th block's payment, not the 15th's")
    const logs = (await rpcRequests(lagging, 'eth_getLogs')) - logsBefore
    assert.ok(logs <= 2, `the transfers' search and the paying block's logs: ${logs} eth_getLogs (12 read one by one)`)

    const newestId = await createTrace(lagging, apiKey, { token: usdc, receiver: newest, amount: '5', afterBlock })
    assert.equal(
      (await waitForFinal(lagging, apiKey, newestId)).transaction,
      lower(hashes[19]!),
      'found in the newest blocks, read by hash',
    )
  } finally {
    await lagging.close()
    await faulty.close()
  }
})
