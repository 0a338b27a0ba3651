// With a quorum, a verdict waits for the other providers' receipts of its block (evidence-quorum.ts). They are
// asked when the block is announced (`newHeads`) while trackings are pending, beside the block's own read, not
// after it was read and judged: with a provider 50 ms away that was one round trip more per callback
// (bench:peers, BENCH_QUORUM=2 BENCH_RPC_DELAY_MS=25: 163 → 118 ms). So a block announced while a payment is
// pending has its receipts asked of a voter though it pays nothing; the block that pays succeeds on the
// agreed evidence.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseEther, type Hash } from 'viem'
import { startAnvil } from '../support/index.ts'
import { startRpcProxy, type RpcProxy } from '../support/rpc-proxy.ts'
import { createPayment, engineAtHead, freshAddress, startEngineService, waitFor, waitForFinal } from './support.ts'

/** Whether a proxy was asked for the receipts of block `hash`. */
const receiptsAsked = (proxies: RpcProxy[], hash: Hash) =>
  proxies.some((proxy) =>
    proxy.requests.some((request) =>
      ((Array.isArray(request.body) ? request.body : [request.body]) as { method: string; params: unknown[] }[]).some(
        (call) => call.method === 'eth_getBlockReceipts' && String(call.params[0]).toLowerCase() === hash.toLowerCase(),
      ),
    ),
  )

test('quorum 2: a block announced while a payment is pending has its receipts asked of a voter, paying or not', async (t) => {
  const anvil = await startAnvil()
  t.after(() => anvil.stop())
  const proxies = await Promise.all([startRpcProxy(anvil.rpcUrl), startRpcProxy(anvil.rpcUrl)])
  t.after(() => Promise.all(proxies.map((proxy) => proxy.close())))
  // Two HTTP providers to read and vote, the node's WebSocket for newHeads.
  const service = await startEngineService(anvil, { chain: { rpc: [...proxies.map((p) => p.url), anvil.wsUrl], quorum: 2 } })
  t.after(() => service.close())
  await engineAtHead(service, anvil)
  const { apiKey } = await service.newAccount()
  const [payer, other] = [anvil.accounts[1]!, anvil.accounts[2]!]
  const receiver = freshAddress()
  const payment = await createPayment(service, apiKey, anvil, payer, { receiver, amount: '0.25' })

  const mined = async (hash: Hash) => (await anvil.publicClient.waitForTransactionReceipt({ hash })).blockHash
  // The first block after the create tells the follower that the chain has pending trackings: the next is read so.
  await mined(await other.wallet.sendTransaction({ to: freshAddress(), value: 1n }))
  await engineAtHead(service, anvil)
  const unrelated = await mined(await other.wallet.sendTransaction({ to: freshAddress(), value: 1n }))
  await waitFor('a voter asked for the receipts of a block that pays nothing', async () => receiptsAsked(proxies, unrelated) || undefined)

  const paying = await mined(await payer.wallet.sendTransaction({ to: receiver, value: parseEther('0.25') }))
  const final = await waitForFinal(service, apiKey, payment.request.secret_id)
  assert.equal(final.status, 'success')
  assert.ok(receiptsAsked(proxies, paying), 'the paying block’s receipts, for the vote')
})
