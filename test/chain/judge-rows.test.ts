// One test per row of the judge table (docs/api.md §3) with real transactions on Anvil:
// native and ERC-20, direct and through the PaymentRouter with a fee receiver, speed-ups and
// cancels. Evidence is read the way the engine reads it: the given hash through `fromHash`, the
// nonce's consumer found in the blocks' transaction lists and built from the block's receipts.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { Address, Hash } from 'viem'
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts'
import { createEvidenceReader, findConsumer, type EvidenceReader } from '../../src/chain/payment-evidence.ts'
import { judge, NATIVE_TOKEN, type Expectation, type Judgement, type MinedTransaction } from '../../src/domain/judge.ts'
import type { FailedReason } from '../../src/domain/tracking.ts'
import {
  deployRouter,
  deployToken,
  mine,
  mintToken,
  routerPayNative,
  routerPayToken,
  sendNative,
  startAnvil,
  testTokenAbi,
  transferToken,
  waitForReceipt,
  type Anvil,
  type AnvilAccount,
} from '../support/index.ts'

let anvil: Anvil
let reader: EvidenceReader
let alice: AnvilAccount
let bob: AnvilAccount
let router: Address
let usdc: Address
let dai: Address

before(async () => {
  anvil = await startAnvil()
  reader = createEvidenceReader(anvil.publicClient)
  alice = anvil.accounts[1]!
  bob = anvil.accounts[2]!
  // sequential: all three come from the same deployer nonce sequence
  router = await deployRouter(anvil)
  usdc = await deployToken(anvil, 'USD Coin', 'USDC', 6)
  dai = await deployToken(anvil, 'Dai', 'DAI', 18)
  await mintToken(anvil, usdc, alice.address, 1_000_000n)
  await mintToken(anvil, dai, alice.address, 1_000_000n)
})
after(async () => {
  await anvil?.stop()
})

const fresh = (): Address => privateKeyToAddress(generatePrivateKey())
const lower = (a: string): string => a.toLowerCase()

/** What a tracking of the mined transaction `hash` would expect, with the fields a test changes. */
async function expectationOf(hash: Hash, over: Partial<Expectation>): Promise<Expectation> {
  const tx = await anvil.publicClient.getTransaction({ hash })
  return expectation({ sender: lower(tx.from), nonce: BigInt(tx.nonce), transaction: hash, ...over })
}

function expectation(over: Partial<Expectation> & Pick<Expectation, 'sender' | 'nonce'>): Expectation {
  return {
    transaction: null,
    receiver: '',
    token: NATIVE_TOKEN,
    amount: 0n,
    feeReceiver: null,
    feeAmount: null,
    commitment: 'confirmed',
    confirmations: 1,
    ...over,
  }
}

/** Gathers the evidence like the engine: given by hash, consumer from the blocks after `afterBlock`. */
async function judgeOnChain(expectation: Expectation, afterBlock: bigint): Promise<Judgement> {
  const native = expectation.token === NATIVE_TOKEN
  const given = expectation.transaction ? await reader.fromHash(expectation.transaction, { native }) : null
  const head = await anvil.publicClient.getBlockNumber()
  let consumer: MinedTransaction | null = null
  for (let n = afterBlock + 1n; n <= head && !consumer; n++) {
    const block = await anvil.publicClient.getBlock({ blockNumber: n, includeTransactions: true })
    const tx = findConsumer(block.transactions, expectation.sender!, expectation.nonce!)
    if (!tx) continue
    const receipts = await anvil.publicClient.getBlockReceipts({ blockNumber: n })
    consumer = await reader.fromFetched(tx, receipts.find((r) => r.transactionHash === tx.hash)!, { native })
  }
  const judged = consumer ?? given
  const finalized = (await anvil.publicClient.getBlock({ blockTag: 'finalized' })).number
  const canonical = judged ? (await anvil.publicClient.getBlock({ blockNumber: judged.blockNumber })).hash === judged.blockHash : false
  return judge(expectation, { given, consumer, position: { head, finalized, canonical } })
}

const head = (): Promise<bigint> => anvil.publicClient.getBlockNumber()
const success = (transaction: string): Judgement => ({ status: 'success', transaction: lower(transaction) })
const failed = (reason: FailedReason, transaction: string): Judgement => ({ status: 'failed', reason, transaction: lower(transaction) })

// --- success, the four ways of paying -------------------------------------------------------------

test('success: native, direct', async () => {
  const start = await head()
  const receiver = fresh()
  const { transactionHash } = await sendNative(anvil, alice, receiver, 1000n)
  const exp = await expectationOf(transactionHash, { receiver: lower(receiver), amount: 1000n })
  assert.deepEqual(await judgeOnChain(exp, start), success(transactionHash))
})

test('success: native through the router with a fee (value moved by internal calls)', async () => {
  const start = await head()
  const [receiver, feeReceiver] = [fresh(), fresh()]
  const { transactionHash } = await routerPayNative(anvil, router, alice, { receiver, feeReceiver, value: 1030n, feeAmount: 30n })
  const exp = await expectationOf(transactionHash, {
    receiver: lower(receiver),
    amount: 1000n,
    feeReceiver: lower(feeReceiver),
    feeAmount: 30n,
  })
  const evidence = await reader.fromHash(transactionHash, { native: true })
  assert.deepEqual(evidence?.transfers, [
    { token: NATIVE_TOKEN, to: lower(router), amount: 1030n },
    { token: NATIVE_TOKEN, to: lower(receiver), amount: 1000n },
    { token: NATIVE_TOKEN, to: lower(feeReceiver), amount: 30n },
  ])
  assert.equal(reader.traceSupport(), 'supported')
  assert.deepEqual(await judgeOnChain(exp, start), success(transactionHash))
})

test('success: ERC-20, direct', async () => {
  const start = await head()
  const receiver = fresh()
  const { transactionHash } = await transferToken(anvil, usdc, alice, receiver, 500n)
  const exp = await expectationOf(transactionHash, { receiver: lower(receiver), token: lower(usdc), amount: 500n })
  assert.deepEqual(await judgeOnChain(exp, start), success(transactionHash))
})

test('success: ERC-20 through the router with a fee (Transfer logs from the router)', async () => {
  const start = await head()
  const [receiver, feeReceiver] = [fresh(), fresh()]
  const { transactionHash } = await routerPayToken(anvil, router, alice, {
    token: usdc,
    receiver,
    amount: 900n,
    feeReceiver,
    feeAmount: 100n,
  })
  const exp = await expectationOf(transactionHash, {
    receiver: lower(receiver),
    token: lower(usdc),
    amount: 900n,
    feeReceiver: lower(feeReceiver),
    feeAmount: 100n,
  })
  assert.deepEqual(await judgeOnChain(exp, start), success(transactionHash))
})

test('success: overpayment', async () => {
  const start = await head()
  const receiver = fresh()
  const { transactionHash } = await sendNative(anvil, alice, receiver, 1001n)
  const exp = await expectationOf(transactionHash, { receiver: lower(receiver), amount: 1000n })
  assert.deepEqual(await judgeOnChain(exp, start), success(transactionHash))
})

// --- the failed rows, in the table's order ------------------------------------------------------

test('SENDER_MISMATCH: the given transaction was sent by another address', async () => {
  const start = await head()
  const receiver = fresh()
  const { transactionHash } = await sendNative(anvil, bob, receiver, 1000n)
  const aliceNonce = BigInt(await anvil.publicClient.getTransactionCount({ address: alice.address }))
  const exp = await expectationOf(transactionHash, {
    sender: lower(alice.address),
    nonce: aliceNonce,
    receiver: lower(receiver),
    amount: 1000n,
  })
  assert.deepEqual(await judgeOnChain(exp, start), failed('SENDER_MISMATCH', transactionHash))
})

test('NONCE_MISMATCH: the given transaction carries another nonce', async () => {
  const start = await head()
  const receiver = fresh()
  const { transactionHash } = await sendNative(anvil, alice, receiver, 1000n)
  const exp = await expectationOf(transactionHash, { receiver: lower(receiver), amount: 1000n })
  const wrong = { ...exp, nonce: exp.nonce! - 1n }
  assert.deepEqual(await judgeOnChain(wrong, start), failed('NONCE_MISMATCH', transactionHash))
})

test('FAILED: the transaction reverted (token transfer above the balance, fixed gas limit)', async () => {
  const start = await head()
  const receiver = fresh()
  const hash = await bob.wallet.writeContract({
    address: usdc,
    abi: testTokenAbi,
    functionName: 'transfer',
    args: [receiver, 10n ** 30n],
    gas: 100_000n,
  })
  const receipt = await waitForReceipt(anvil, hash)
  assert.equal(receipt.status, 'reverted')
  const exp = await expectationOf(hash, { receiver: lower(receiver), token: lower(usdc), amount: 1n })
  assert.deepEqual(await judgeOnChain(exp, start), failed('FAILED', hash))
})

/** Sends `original` then a same-nonce replacement with doubled fees, automine off, and mines one block. */
async function replace(
  from: AnvilAccount,
  original: { to: Address; value: bigint },
  replacement: { to: Address; value: bigint },
): Promise<{ original: Hash; replacement: Hash; nonce: bigint }> {
  await anvil.testClient.setAutomine(false)
  try {
    const nonce = await anvil.publicClient.getTransactionCount({ address: from.address })
    const fees = await anvil.publicClient.estimateFeesPerGas()
    const first = await from.wallet.sendTransaction({ ...original, nonce, ...fees })
    const second = await from.wallet.sendTransaction({
      ...replacement,
      nonce,
      maxFeePerGas: fees.maxFeePerGas * 2n,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas * 2n,
    })
    await mine(anvil, 1)
    return { original: first, replacement: second, nonce: BigInt(nonce) }
  } finally {
    await anvil.testClient.setAutomine(true)
  }
}

test('TRANSACTION_MISMATCH: a cancel replaced the given transaction and pays nothing', async () => {
  const start = await head()
  const receiver = fresh()
  const { original, replacement, nonce } = await replace(alice, { to: receiver, value: 1000n }, { to: alice.address, value: 0n })
  const exp = expectation({ sender: lower(alice.address), nonce, transaction: original, receiver: lower(receiver), amount: 1000n })
  assert.equal(await reader.fromHash(original, { native: true }), null, 'the original never got mined')
  assert.deepEqual(await judgeOnChain(exp, start), failed('TRANSACTION_MISMATCH', replacement))
})

test('replacement that pays (speed-up): success with the replacing hash', async () => {
  const start = await head()
  const receiver = fresh()
  const { original, replacement, nonce } = await replace(alice, { to: receiver, value: 1000n }, { to: receiver, value: 1000n })
  assert.notEqual(original, replacement)
  const exp = expectation({ sender: lower(alice.address), nonce, transaction: original, receiver: lower(receiver), amount: 1000n })
  assert.deepEqual(await judgeOnChain(exp, start), success(replacement))
})

test('RECEIVER_MISMATCH: nothing reached the receiver', async () => {
  const start = await head()
  const receiver = fresh()
  const { transactionHash } = await sendNative(anvil, alice, fresh(), 1000n)
  const exp = await expectationOf(transactionHash, { receiver: lower(receiver), amount: 1000n })
  assert.deepEqual(await judgeOnChain(exp, start), failed('RECEIVER_MISMATCH', transactionHash))
})

test('TOKEN_MISMATCH: another token reached the receiver', async () => {
  const start = await head()
  const receiver = fresh()
  const { transactionHash } = await transferToken(anvil, dai, alice, receiver, 500n)
  const exp = await expectationOf(transactionHash, { receiver: lower(receiver), token: lower(usdc), amount: 500n })
  assert.deepEqual(await judgeOnChain(exp, start), failed('TOKEN_MISMATCH', transactionHash))
})

test('AMOUNT_MISMATCH: less than the amount reached the receiver', async () => {
  const start = await head()
  const receiver = fresh()
  const { transactionHash } = await transferToken(anvil, usdc, alice, receiver, 499n)
  const exp = await expectationOf(transactionHash, { receiver: lower(receiver), token: lower(usdc), amount: 500n })
  assert.deepEqual(await judgeOnChain(exp, start), failed('AMOUNT_MISMATCH', transactionHash))
})

test('MISMATCH: the fee receiver got less than the fee (native through the router)', async () => {
  const start = await head()
  const [receiver, feeReceiver] = [fresh(), fresh()]
  const { transactionHash } = await routerPayNative(anvil, router, alice, { receiver, feeReceiver, value: 1029n, feeAmount: 29n })
  const exp = await expectationOf(transactionHash, {
    receiver: lower(receiver),
    amount: 1000n,
    feeReceiver: lower(feeReceiver),
    feeAmount: 30n,
  })
  assert.deepEqual(await judgeOnChain(exp, start), failed('MISMATCH', transactionHash))
})

test('MISMATCH: amount and fee both short (ERC-20 through the router)', async () => {
  const start = await head()
  const [receiver, feeReceiver] = [fresh(), fresh()]
  const { transactionHash } = await routerPayToken(anvil, router, alice, {
    token: usdc,
    receiver,
    amount: 899n,
    feeReceiver,
    feeAmount: 99n,
  })
  const exp = await expectationOf(transactionHash, {
    receiver: lower(receiver),
    token: lower(usdc),
    amount: 900n,
    feeReceiver: lower(feeReceiver),
    feeAmount: 100n,
  })
  assert.deepEqual(await judgeOnChain(exp, start), failed('MISMATCH', transactionHash))
})

// --- waiting ---------------------------------------------------------------------------------------

test('pending until the required confirmations, the inclusion block being the first', async () => {
  const start = await head()
  const receiver = fresh()
  const { transactionHash } = await sendNative(anvil, alice, receiver, 1000n)
  const exp = await expectationOf(transactionHash, { receiver: lower(receiver), amount: 1000n, confirmations: 2 })
  assert.deepEqual(await judgeOnChain(exp, start), { status: 'pending', confirmations: { required: 2, passed: 1 } })
  await mine(anvil, 1)
  assert.deepEqual(await judgeOnChain(exp, start), success(transactionHash))
})

test('a failing transaction waits for the same confirmations, naming the reason it will fail with', async () => {
  const start = await head()
  const receiver = fresh()
  const { transactionHash } = await sendNative(anvil, alice, receiver, 999n)
  const exp = await expectationOf(transactionHash, { receiver: lower(receiver), amount: 1000n, confirmations: 2 })
  assert.deepEqual(await judgeOnChain(exp, start), {
    status: 'pending',
    confirmations: { required: 2, passed: 1 },
    failing: { reason: 'AMOUNT_MISMATCH', transaction: lower(transactionHash) },
  })
  await mine(anvil, 1)
  assert.deepEqual(await judgeOnChain(exp, start), failed('AMOUNT_MISMATCH', transactionHash))
})

test('a trace (no transaction given) before the payment is pending, then succeeds', async () => {
  const start = await head()
  const receiver = fresh()
  const nonce = BigInt(await anvil.publicClient.getTransactionCount({ address: alice.address }))
  const exp = expectation({ sender: lower(alice.address), nonce, receiver: lower(receiver), token: lower(usdc), amount: 10n })
  assert.deepEqual(await judgeOnChain(exp, start), { status: 'pending', confirmations: { required: 1, passed: 0 } })
  const { transactionHash } = await transferToken(anvil, usdc, alice, receiver, 10n)
  assert.deepEqual(await judgeOnChain(exp, start), success(transactionHash))
})
