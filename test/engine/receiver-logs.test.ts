// Matching by receiver from a block's logs (docs/architecture.md, "A block's logs for its receipts"): on a
// real block of Anvil, the traces paid by a transaction that logged are found from the logs alone; of the
// transactions without a log, none is a candidate with token traces alone (a token payment is a log), and
// with native traces only those naming a native trace's receiver have their receipt read; a reverted one
// pays nothing. The findings are those the block's whole receipts
// give. Through the service: with token traces pending, a block's traces succeed without a receipt asked,
// and so does a token trace created after its payment's block was passed, also 81 blocks back (found by its
// transfers), and one whose deadline passed first times out (more in trace-catch-up.test.ts).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { parseEther, type Address, type Hash } from 'viem'
import { createChainReader, type FullBlock } from '../../src/chain/chain-reader.ts'
import { createEvidenceReader } from '../../src/chain/payment-evidence.ts'
import { createReceiptSource, type ReceiptSource } from '../../src/engine/block-evidence.ts'
import { matchReceivers, receiverReceipts } from '../../src/engine/receiver-match.ts'
import { createAccount } from '../../src/store/accounts.ts'
import { createTestDatabase } from '../support/database.ts'
import { deployToken, mintToken, startAnvil, testTokenAbi, type Anvil, type AnvilAccount } from '../support/index.ts'
import type { TestService } from '../support/service.ts'
import { insertTestTracking } from '../support/trackings.ts'
import {
  createTrace,
  engineAtHead,
  freshAddress,
  lower,
  NATIVE,
  readPayment,
  rpcRequests,
  startEngineService,
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

/** Sends `sends` unmined, then mines them in one block; their hashes in order. */
async function oneBlock(sends: ((nonceOf: (account: AnvilAccount) => Promise<number>) => Promise<Hash>)[]): Promise<Hash[]> {
  const next = new Map<string, number>()
  const nonceOf = async (account: AnvilAccount) => {
    const nonce = next.get(account.address) ?? (await anvil.publicClient.getTransactionCount({ address: account.address }))
    next.set(account.address, nonce + 1)
    return nonce
  }
  await anvil.testClient.setAutomine(false)
  const hashes: Hash[] = []
  try {
    for (const send of sends) hashes.push(await send(nonceOf))
    await anvil.testClient.mine({ blocks: 1 })
  } finally {
    await anvil.testClient.setAutomine(true)
  }
  return hashes
}

const tokenTo = (from: AnvilAccount, to: Address, amount: bigint) => async (nonceOf: (a: AnvilAccount) => Promise<number>) =>
  from.wallet.writeContract({
    address: usdc,
    abi: testTokenAbi,
    functionName: 'transfer',
    args: [to, amount],
    gas: 100_000n,
    nonce: await nonceOf(from),
  })
const nativeTo = (from: AnvilAccount, to: Address, value: bigint) => async (nonceOf: (a: AnvilAccount) => Promise<number>) =>
  from.wallet.sendTransaction({ to, value, nonce: await nonceOf(from) })

test('from the logs, a transaction without a log is a candidate only with native traces pending, and only its receipt is read', async () => {
  const database = await createTestDatabase()
  try {
    const [payer, broke, other] = [anvil.accounts[1]!, anvil.accounts[2]!, anvil.accounts[3]!]
    const [byToken, byNative, byRevert, byNativeRevert] = [freshAddress(), freshAddress(), freshAddress(), freshAddress()]
    const account = await createAccount(database.db, 'receiver logs')
    const trace = (receiver: Address, token: string, decimals: number, amount: string) =>
      insertTestTracking(database.db, account.id, {
        nonceless: true,
        sender: null,
        nonce: null,
        transaction: null,
        afterBlock: 0n,
        receiver: lower(receiver),
        token: lower(token),
        decimals,
        amount,
      })
    const tokenTrace = await trace(byToken, usdc, 6, '2')
    const nativeTrace = await trace(byNative, NATIVE, 18, '0.1')
    await trace(byRevert, usdc, 6, '5')
    await trace(byNativeRevert, NATIVE, 18, '1')

    const hashes = await oneBlock([
      tokenTo(payer, byToken, 2_000_000n),
      nativeTo(payer, byNative, parseEther('0.1')),
      nativeTo(other, freshAddress(), 1n),
      nativeTo(other, freshAddress(), 1n),
      // `broke` holds no USDC: mined, reverted, no log; its input names a token trace's receiver, then a
      // native trace's (which a transaction without a log might have paid: its status is read).
      tokenTo(broke, byRevert, 5_000_000n),
      tokenTo(broke, byNativeRevert, 5_000_000n),
    ])
    const reader = createChainReader(anvil.publicClient)
    const block = (await reader.block('latest')) as FullBlock
    assert.equal(block.transactions.length, 6, 'the six transactions share one block')

    const source = createReceiptSource(reader)
    const asked: string[][] = []
    const noting: ReceiptSource = {
      ...source,
      receipts: (b, wanted) => {
        asked.push([...wanted].sort())
        return source.receipts(b, wanted)
      },
      all: () => Promise.reject(new Error('the whole block was read')),
    }
    const deps = { chain: 'ethereum', db: database.db, evidence: createEvidenceReader(anvil.publicClient) }
    const paid = (findings: { tracking: { id: string }; paying: { hash: string } }[]) => findings.map((f) => [f.tracking.id, f.paying.hash])

    // Read as for token traces alone (the chain saw no native trace pending): a transaction without a log
    // is no candidate, and no receipt is asked.
    const tokenOnly = await receiverReceipts(noting, block)
    assert.ok('logged' in tokenOnly && tokenOnly.rest === undefined)
    assert.deepEqual(paid(await matchReceivers(deps, block, tokenOnly, new Set())), [[tokenTrace.id, lower(hashes[0]!)]])
    assert.deepEqual(asked, [])

    // Read from the logs with native traces pending (one created after the block's read ahead was chosen).
    const fromLogs = await matchReceivers(deps, block, { logged: tokenOnly.logged, rest: noting }, new Set())
    assert.deepEqual(
      asked,
      [[lower(hashes[1]!), lower(hashes[5]!)].sort()],
      "the native payment, and the reverted transfer naming a native trace's receiver",
    )
    assert.deepEqual(paid(fromLogs), [
      [tokenTrace.id, lower(hashes[0]!)],
      [nativeTrace.id, lower(hashes[1]!)],
    ])

    const whole = await matchReceivers(deps, block, { whole: await source.all(block) }, new Set())
    assert.deepEqual(paid(fromLogs), paid(whole), 'the findings the whole receipts give')
    assert.deepEqual(
      fromLogs.map((f) => f.paying),
      whole.map((f) => f.paying),
    )
  } finally {
    await database.close()
  }
})

test('an empty answer for the logs of a block that has some is not believed: every receipt is read', async () => {
  await oneBlock([tokenTo(anvil.accounts[1]!, freshAddress(), 1n), nativeTo(anvil.accounts[3]!, freshAddress(), 1n)])
  const reader = createChainReader(anvil.publicClient)
  const block = (await reader.block('latest')) as FullBlock
  assert.equal(block.logsBloomEmpty, false)
  const source = createReceiptSource(reader)
  const lagging: ReceiptSource = { ...source, logged: async () => new Map() }
  const receipts = await receiverReceipts(lagging, block)
  assert.ok('whole' in receipts, 'read whole')
  assert.equal(receipts.whole.size, 2)

  await oneBlock([nativeTo(anvil.accounts[3]!, freshAddress(), 1n)])
  const logless = (await reader.block('latest')) as FullBlock
  assert.equal(logless.logsBloomEmpty, true)
  assert.ok('logged' in (await receiverReceipts(lagging, logless)), 'no log in the block: the empty answer is the truth')
})

test('through the service: token traces paid in one block succeed from its logs, no receipt asked; a reverted transfer pays none; a native trace is paid too', async () => {
  let service: TestService | undefined
  try {
    service = await startEngineService(anvil)
    const { apiKey } = await service.newAccount()
    const calls = (method: string) => rpcRequests(service!, method)
    const track = async (receiver: Address, token: string, amount: string, afterBlock?: bigint): Promise<string> =>
      createTrace(service!, apiKey, { token, receiver, amount, afterBlock: afterBlock ?? (await anvil.publicClient.getBlockNumber()) })
    const [payer, broke, other] = [anvil.accounts[1]!, anvil.accounts[2]!, anvil.accounts[3]!]
    const [byToken, byRevert, byNative] = [freshAddress(), freshAddress(), freshAddress()]
    const tokenId = await track(byToken, usdc, '2')
    const revertId = await track(byRevert, usdc, '5')
    const receiptCalls = async () => (await calls('eth_getBlockReceipts')) + (await calls('eth_getTransactionReceipt'))
    const [logsBefore, receiptsBefore] = [await calls('eth_getLogs'), await receiptCalls()]

    const hashes = await oneBlock([
      tokenTo(payer, byToken, 2_000_000n),
      // Reverted (`broke` holds no USDC), no log: pays nothing, fails nothing.
      tokenTo(broke, byRevert, 5_000_000n),
      nativeTo(other, freshAddress(), 1n),
      nativeTo(other, freshAddress(), 1n),
    ])
    assert.equal((await waitForFinal(service, apiKey, tokenId)).transaction, lower(hashes[0]!))
    await engineAtHead(service, anvil)
    assert.equal((await readPayment(service, apiKey, revertId)).status, 'pending', 'a reverted transfer pays nothing and fails nothing')
    assert.ok((await calls('eth_getLogs')) > logsBefore, "the block's logs were read")
    assert.equal(await receiptCalls(), receiptsBefore, 'no receipt was asked')

    const nativeId = await track(byNative, NATIVE, '0.1')
    const paying = await oneBlock([tokenTo(payer, byRevert, 5_000_000n), nativeTo(payer, byNative, parseEther('0.1'))])
    assert.equal((await waitForFinal(service, apiKey, revertId)).transaction, lower(paying[0]!))
    assert.equal((await waitForFinal(service, apiKey, nativeId)).transaction, lower(paying[1]!))

    // A token trace created after its payment's block was passed is found in that block's logs (trace-catch-up.ts).
    const late = freshAddress()
    const afterBlock = await anvil.publicClient.getBlockNumber()
    const [latePaid] = await oneBlock([tokenTo(payer, late, 3_000_000n), nativeTo(other, freshAddress(), 1n)])
    await oneBlock([])
    await engineAtHead(service, anvil)
    const receiptsBeforeLate = await receiptCalls()
    const lateId = await track(late, usdc, '3', afterBlock)
    assert.equal((await waitForFinal(service, apiKey, lateId)).transaction, lower(latePaid!))
    assert.equal(await receiptCalls(), receiptsBeforeLate, 'found from the logs: no receipt was asked')
  } finally {
    await service?.close()
  }
})

test('through the service: a token trace paid 81 blocks back is found by its transfers; past its deadline it times out', async () => {
  let service: TestService | undefined
  try {
    service = await startEngineService(anvil)
    const { apiKey } = await service.newAccount()
    const payer = anvil.accounts[1]!
    const [far, late] = [freshAddress(), freshAddress()]
    const afterBlock = await anvil.publicClient.getBlockNumber()
    const start = (await anvil.publicClient.getBlock({ blockNumber: afterBlock })).timestamp
    // 80 blocks a second apart, the block paying both, then 8 more: it is older than the newest 4, read one by one.
    await anvil.testClient.mine({ blocks: 80, interval: 1 })
    const [paysFar, paysLate] = await oneBlock([tokenTo(payer, far, 4_000_000n), tokenTo(payer, late, 4_000_000n)])
    await anvil.testClient.mine({ blocks: 8 })
    await engineAtHead(service, anvil)

    const farId = await createTrace(service, apiKey, { token: usdc, receiver: far, amount: '4', afterBlock })
    assert.equal((await waitForFinal(service, apiKey, farId)).transaction, lower(paysFar!))

    // The same payment, but the trace's deadline passed 40 blocks before it.
    const response = await service.api(apiKey, {
      method: 'POST',
      url: '/v2/payments',
      payload: {
        blockchain: 'ethereum',
        token: usdc,
        receiver: late,
        amount: '4',
        after_block: String(afterBlock),
        deadline: Number(start + 40n),
        secret_id: `late-${process.pid}-${Date.now()}`,
        callback: 'https://merchant.example/callback',
      },
    })
    assert.equal(response.statusCode, 201, response.body)
    const lateDone = await waitForFinal(service, apiKey, response.json<{ secret_id: string }>().secret_id)
    assert.equal(lateDone.status, 'failed')
    assert.equal(lateDone.failed_reason, 'TRACKING_TIMED_OUT')
    assert.notEqual(lateDone.transaction, lower(paysLate!))
  } finally {
    await service?.close()
  }
})
