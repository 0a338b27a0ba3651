// A block's receipts as its logs tell them (logged-receipts.ts): on a real chain, the transaction
// that logged is there with its logs and `success`, one that reverted or ran no code is not (its
// receipt is read), its evidence is the one its receipt gives, and an answer about another block is
// not taken. Read ahead (block-evidence.ts), the others' receipts are asked of the usual source alone;
// the evidence is the logs' provider's vote when the transaction is that provider's answer too.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { Hash, Log, TransactionReceipt } from 'viem'
import { noteAnswerSource } from '../../src/chain/answer-source.ts'
import { createChainReader } from '../../src/chain/chain-reader.ts'
import { receiptsFromLogs } from '../../src/chain/logged-receipts.ts'
import { createEvidenceReader } from '../../src/chain/payment-evidence.ts'
import { NonRetryableChainError } from '../../src/chain/errors.ts'
import { createReceiptSource, receiptsAhead, type ReceiptSource } from '../../src/engine/block-evidence.ts'
import { deployToken, mintToken, startAnvil, testTokenAbi, type Anvil } from '../support/index.ts'
import { randomAddress, randomHash } from '../support/trackings.ts'

let anvil: Anvil
let block: { hash: Hash; number: bigint }
const sent: { paid: Hash; reverted: Hash; native: Hash } = {} as never

before(async () => {
  anvil = await startAnvil()
  const token = await deployToken(anvil, 'USD Coin', 'USDC', 6)
  const payer = anvil.accounts[1]!
  await mintToken(anvil, token, payer.address, 1_000_000n)
  await anvil.testClient.setAutomine(false)
  const nonce = await anvil.publicClient.getTransactionCount({ address: payer.address })
  const transfer = (amount: bigint, k: number) =>
    payer.wallet.writeContract({
      address: token,
      abi: testTokenAbi,
      functionName: 'transfer',
      args: [randomAddress() as `0x${string}`, amount],
      nonce: nonce + k,
      gas: 100_000n,
    })
  sent.paid = await transfer(250_000n, 0)
  // More than the payer holds: mined, reverted, no log.
  sent.reverted = await transfer(10n ** 18n, 1)
  sent.native = await payer.wallet.sendTransaction({ to: randomAddress() as `0x${string}`, value: 1n, nonce: nonce + 2 })
  await anvil.testClient.mine({ blocks: 1 })
  const mined = await anvil.publicClient.getBlock()
  assert.equal(mined.transactions.length, 3, 'the three transactions share one block')
  block = { hash: mined.hash, number: mined.number }
})
after(async () => anvil?.stop())

test('the transaction that logged is told with its logs and success; one that reverted or ran no code is not', async () => {
  const reader = createChainReader(anvil.publicClient)
  const logged = receiptsFromLogs(block.hash, await reader.blockLogs(block.hash))
  assert.ok(logged)
  assert.deepEqual([...logged.keys()], [sent.paid.toLowerCase()])
  const told = logged.get(sent.paid.toLowerCase())!
  const receipt = await anvil.publicClient.getTransactionReceipt({ hash: sent.paid })
  assert.equal(told.status, 'success')
  assert.equal(told.blockNumber, block.number)
  assert.equal(told.blockHash, block.hash.toLowerCase())
  assert.deepEqual(
    told.logs.map((log) => [log.address, log.topics, log.data]),
    receipt.logs.map((log) => [log.address, log.topics, log.data]),
  )
  assert.equal((await anvil.publicClient.getTransactionReceipt({ hash: sent.reverted })).status, 'reverted')

  // The evidence built from the logs is the one built from the receipt.
  const evidence = createEvidenceReader(anvil.publicClient)
  const tx = await anvil.publicClient.getTransaction({ hash: sent.paid })
  assert.deepEqual(await evidence.fromFetched(tx, told, { native: false }), await evidence.fromFetched(tx, receipt, { native: false }))
})

test("logs of another block, or naming no transaction, tell nothing of this one's receipts", async () => {
  const logs = await createChainReader(anvil.publicClient).blockLogs(block.hash)
  assert.equal(receiptsFromLogs(randomHash(), logs), undefined)
  const pending = { ...logs[0]!, transactionHash: null } as unknown as Log
  assert.equal(receiptsFromLogs(block.hash, [pending]), undefined)
  assert.equal(receiptsFromLogs(block.hash, [])?.size, 0, 'a block without logs tells no receipt')
})

test('read ahead from the logs, only the receipts they do not tell are asked of the source', async () => {
  const logged = receiptsFromLogs(block.hash, await createChainReader(anvil.publicClient).blockLogs(block.hash))!
  const asked: string[][] = []
  const fallback: ReceiptSource = {
    async receipts(_block, hashes) {
      asked.push(hashes)
      const receipts = await Promise.all(hashes.map((hash) => anvil.publicClient.getTransactionReceipt({ hash: hash as Hash })))
      return new Map(receipts.map((r) => [r.transactionHash.toLowerCase(), r]))
    },
    all: async () => new Map<string, TransactionReceipt>(),
    whole: async () => undefined,
    logged: async () => undefined,
  }
  const source = receiptsAhead({ logged }, fallback)
  const full = { ...block, parentHash: randomHash(), timestamp: 0n, transactions: [] } as never
  const receipts = await source.receipts(full, [sent.paid, sent.reverted.toUpperCase().replace('0X', '0x')])
  assert.deepEqual(asked, [[sent.reverted.toLowerCase()]], 'the reverted one alone is read')
  assert.equal(receipts.get(sent.paid.toLowerCase())?.status, 'success')
  assert.equal(receipts.get(sent.reverted.toLowerCase())?.status, 'reverted')
  assert.equal((await source.receipts(full, [sent.paid])).size, 1)
  assert.equal(asked.length, 1, 'every receipt told by the logs: nothing asked')
})

test("the evidence the logs tell is their provider's vote only when the transaction is that provider's answer too", async () => {
  const evidence = createEvidenceReader(anvil.publicClient)
  const logs = await createChainReader(anvil.publicClient).blockLogs(block.hash)
  for (const log of logs) noteAnswerSource(log, 1)
  const told = receiptsFromLogs(block.hash, logs)!.get(sent.paid.toLowerCase())!
  const voteWith = async (txProvider: number) => {
    const tx = { ...(await anvil.publicClient.getTransaction({ hash: sent.paid })) }
    noteAnswerSource(tx, txProvider)
    await evidence.fromFetched(tx, told, { native: false })
    return evidence.seen(sent.paid)?.source
  }
  assert.equal(await voteWith(1), 1, 'block and logs from provider 1: its vote')
  assert.equal(await voteWith(2), undefined, "the sender from provider 2's block, the rest from provider 1's logs: no one's vote")
})

test("an RPC that refuses a block's logs by hash before ever giving them is not asked again; one that gave them is", async () => {
  const real = createChainReader(anvil.publicClient)
  let asked = 0
  let refuse = true
  const reader = {
    ...real,
    async blockLogs(hash: Hash) {
      asked++
      if (refuse) throw new NonRetryableChainError('invalid params: blockHash')
      return real.blockLogs(hash)
    },
  }
  const refused = createReceiptSource(reader)
  assert.equal(await refused.logged(block.hash), undefined)
  refuse = false
  assert.equal(await refused.logged(block.hash), undefined, 'not asked again: the receipts are read the older way')
  assert.equal(asked, 1)

  const given = createReceiptSource(reader)
  assert.equal((await given.logged(block.hash))?.size, 1)
  refuse = true
  assert.equal(await given.logged(block.hash), undefined, "a failure after the logs came is this block's alone")
  refuse = false
  assert.equal((await given.logged(block.hash))?.size, 1)
  assert.equal(asked, 4)
})
