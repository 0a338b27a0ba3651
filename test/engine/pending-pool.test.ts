// A block's transactions from the pending pool: the transactions a WebSocket provider announced pending,
// completed by a block read with hashes only, are the block read whole; a block with one transaction the pool
// did not see is read whole, and so is the next, until a block read whole would have been complete from the pool.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { getWebSocketRpcClient } from 'viem/utils'
import { parseGwei, type Hash } from 'viem'
import { createChainReader, type ChainReader } from '../../src/chain/chain-reader.ts'
import { fullBlockFrom } from '../../src/chain/pooled-block.ts'
import { createAnnouncedBlockReader } from '../../src/engine/announced-block.ts'
import { createPendingPool, type PendingPool } from '../../src/engine/pending-pool.ts'
import { deployToken, mine, startAnvil, testTokenAbi, type Anvil } from '../support/index.ts'
import { freshAddress, waitFor } from './support.ts'

let anvil: Anvil
let pool: PendingPool
let token: `0x${string}`

before(async () => {
  anvil = await startAnvil({ noMining: true })
  token = await deployToken(anvil, 'USD Coin', 'USDC', 6)
  pool = createPendingPool({ wsUrl: anvil.wsUrl, provider: 0 })
  await waitFor('the pending transactions subscription', async () => pool.subscribed || undefined)
})
after(async () => {
  await pool?.stop()
  // The pool's socket (viem keeps one per URL and options) would keep this test process alive.
  ;(await getWebSocketRpcClient(anvil.wsUrl, { keepAlive: true, reconnect: true })).close()
  await anvil?.stop()
})

/** Sends a mix of transactions (EIP-1559 and legacy, a value transfer, a token call, a contract creation) and waits until the pool has them. */
async function sendMix(): Promise<Hash[]> {
  const [a, b, c] = [anvil.accounts[1]!, anvil.accounts[2]!, anvil.accounts[3]!]
  const hashes = [
    await a.wallet.sendTransaction({ to: freshAddress(), value: 12_345n, maxPriorityFeePerGas: parseGwei('0.5') }),
    await b.wallet.sendTransaction({ to: freshAddress(), value: 1n, gasPrice: parseGwei('3'), type: 'legacy' }),
    await anvil.walletClient.writeContract({ address: token, abi: testTokenAbi, functionName: 'mint', args: [freshAddress(), 5n] }),
    await c.wallet.sendTransaction({ data: '0x600a600c600039600a6000f3602a60005260206000f3' }),
  ]
  await waitFor('the pool to hold the transactions', async () => hashes.every((hash) => pool.get(hash)) || undefined)
  return hashes
}

/** A reader that counts the blocks it was asked for, whole and with hashes only. */
function countingReader(): { reader: ChainReader; whole: () => number; thin: () => number } {
  const real = createChainReader(anvil.publicClient)
  let whole = 0
  let thin = 0
  return {
    reader: {
      ...real,
      block: (ref) => (whole++, real.block(ref)),
      blockWithHashes: (hash) => (thin++, real.blockWithHashes(hash)),
    },
    whole: () => whole,
    thin: () => thin,
  }
}

const headerOf = async () => {
  const block = await anvil.publicClient.getBlock()
  return { number: block.number, hash: block.hash, parentHash: block.parentHash, timestamp: block.timestamp }
}

test('a block completed from the pending pool equals the block read whole', async () => {
  const hashes = await sendMix()
  await mine(anvil, 1)
  const reader = createChainReader(anvil.publicClient)
  const { hash } = await headerOf()
  const thin = await reader.blockWithHashes(hash)
  assert.deepEqual([...thin!.transactionHashes].sort(), [...hashes].sort(), 'the block holds the four (ordered by their tips)')
  const pooled = fullBlockFrom(thin!, (h) => pool.get(h))
  const whole = await reader.block(thin!.number)
  assert.ok(pooled, 'every transaction was announced pending')
  assert.deepEqual(pooled, whole)
  // The EIP-1559 transfer paid the base fee plus its tip, below its cap.
  const transfer = pooled.transactions.find((tx) => tx.hash === hashes[0])!
  assert.ok(transfer.gasPrice! < transfer.maxFeePerGas!)
  assert.equal(
    fullBlockFrom(thin!, () => undefined),
    undefined,
    'a transaction the pool did not see',
  )
})

test('the announced block is read with hashes only while the pool serves; whole after a miss, until the pool would have served', async () => {
  const { reader, whole, thin } = countingReader()
  const announced = createAnnouncedBlockReader(reader, pool)
  const read = async () => {
    const header = await headerOf()
    const block = await announced(header)
    assert.deepEqual(block, await createChainReader(anvil.publicClient).block(header.number))
    return { whole: whole(), thin: thin() }
  }

  await sendMix()
  await mine(anvil, 1)
  assert.deepEqual(await read(), { whole: 0, thin: 1 }, 'served by the pool')

  const [unseen] = await sendMix()
  pool.forget([unseen!])
  await mine(anvil, 1)
  assert.deepEqual(await read(), { whole: 1, thin: 2 }, 'one transaction missing: read whole after the thin read')

  await sendMix()
  await mine(anvil, 1)
  assert.deepEqual(await read(), { whole: 2, thin: 2 }, 'after a miss: read whole at once')

  await sendMix()
  await mine(anvil, 1)
  assert.deepEqual(await read(), { whole: 2, thin: 3 }, 'the last block would have been served: hashes only again')
})

test('a block whose hash the provider no longer knows is read by its number', async () => {
  const { reader, whole } = countingReader()
  const announced = createAnnouncedBlockReader(reader, pool)
  await mine(anvil, 1)
  const header = await headerOf()
  const block = await announced({ ...header, hash: `0x${'ab'.repeat(32)}` })
  assert.equal(block?.hash, header.hash)
  assert.equal(whole(), 1)
})
