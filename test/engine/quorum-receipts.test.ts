// The quorum's receipts (src/engine/quorum-receipts.ts) against Anvil behind counting proxies: a provider is
// asked for a block's receipts once for all the verdicts of that block; it is asked for a receipt by hash when
// it does not know the block, places the transaction elsewhere, or does not offer eth_getBlockReceipts. A block
// announced is asked of the voters at once, unless 16 blocks in a row were asked so to no verdict.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { createPublicClient, http, parseEther, type Hash } from 'viem'
import { createQuorumReceipts } from '../../src/engine/quorum-receipts.ts'
import { mine, startAnvil, type Anvil } from '../support/index.ts'
import { startRpcProxy, type RpcProxy } from '../support/rpc-proxy.ts'
import { randomHash } from '../support/trackings.ts'

let anvil: Anvil
let proxies: RpcProxy[]
let block: { hash: Hash; transactions: Hash[] }

before(async () => {
  anvil = await startAnvil({ noMining: true })
  proxies = [await startRpcProxy(anvil.rpcUrl), await startRpcProxy(anvil.rpcUrl)]
  for (const payer of anvil.accounts.slice(0, 5))
    await payer.wallet.sendTransaction({ to: anvil.accounts[9]!.address, value: parseEther('1') })
  await mine(anvil, 1)
  const mined = await anvil.publicClient.getBlock()
  block = { hash: mined.hash, transactions: mined.transactions }
  assert.equal(block.transactions.length, 5)
})
after(async () => {
  for (const proxy of proxies ?? []) await proxy.close()
  await anvil?.stop()
})

const methodsOf = (proxy: RpcProxy) => proxy.requests.flatMap((request) => request.methods)
const receiptsVia = () => {
  for (const proxy of proxies) proxy.reset()
  return createQuorumReceipts(proxies.map((proxy) => createPublicClient({ transport: http(proxy.url) })))
}

test("a block's verdicts: one eth_getBlockReceipts per provider asked, each receipt as the provider gave it", async () => {
  const receipts = receiptsVia()
  const got = await Promise.all(block.transactions.map((hash) => receipts.receipt(1, hash, block.hash)))
  assert.deepEqual(
    got.map((receipt) => receipt?.transactionHash),
    block.transactions,
  )
  assert.ok(got.every((receipt) => receipt?.blockHash === block.hash && receipt.status === 'success'))
  assert.deepEqual(methodsOf(proxies[1]!), ['eth_getBlockReceipts'], 'one request for the five')
  assert.deepEqual(methodsOf(proxies[0]!), [], 'the other provider was not asked')
  await receipts.receipt(1, block.transactions[0]!, block.hash)
  assert.deepEqual(methodsOf(proxies[1]!), ['eth_getBlockReceipts'], 'a later verdict of the block: no request')
})

test('a provider that does not know the block, or not the transaction in it, is asked for the receipt itself', async () => {
  const receipts = receiptsVia()
  const elsewhere = await receipts.receipt(0, block.transactions[2]!, randomHash())
  assert.equal(elsewhere?.blockHash, block.hash, 'its own view: the transaction where it has it')
  assert.deepEqual(methodsOf(proxies[0]!), ['eth_getBlockReceipts', 'eth_getTransactionReceipt'])
  const unknown = await receipts.receipt(0, randomHash(), block.hash)
  assert.equal(unknown, null, 'a transaction it does not know: no receipt, no answer')
})

test('a provider without eth_getBlockReceipts: receipts by hash, learned once', async () => {
  proxies[1]!.setCallRefusal((call) =>
    call.method === 'eth_getBlockReceipts' ? { code: -32601, message: 'the method does not exist' } : null,
  )
  try {
    const receipts = receiptsVia()
    for (const hash of block.transactions.slice(0, 3)) assert.equal((await receipts.receipt(1, hash, block.hash))?.transactionHash, hash)
    assert.deepEqual(methodsOf(proxies[1]!), [
      'eth_getBlockReceipts',
      'eth_getTransactionReceipt',
      'eth_getTransactionReceipt',
      'eth_getTransactionReceipt',
    ])
  } finally {
    proxies[1]!.setCallRefusal(null)
  }
})

test('blocks announced: the voters asked for their receipts, until 16 in a row bring no verdict; a verdict on a new one resumes it', async () => {
  const receipts = receiptsVia()
  const announced = Array.from({ length: 18 }, () => randomHash())
  for (const hash of announced.slice(0, 16)) {
    receipts.prepare([1], hash)
    assert.ok(receipts.asked(1, hash), 'asked at the announcement')
    assert.equal(receipts.asked(0, hash), false, 'of the voters only')
  }
  receipts.prepare([1], announced[16]!)
  assert.equal(receipts.asked(1, announced[16]!), false, 'sixteen blocks without a verdict: no more asked ahead')
  // A verdict on the newest block paid a round trip for its receipts (here: asked, then by hash).
  await receipts.receipt(1, block.transactions[0]!, announced[16]!)
  receipts.prepare([1], announced[17]!)
  assert.ok(receipts.asked(1, announced[17]!), 'asked ahead again')
})
