// Payments without a nonce (docs/api.md, "Payments without a nonce"), end to end on Anvil through the
// real service: found by receiver (sender-less through a router), several trackings of one receiver and
// amount in creation order, one transaction paying two accounts, a deadline, a reorg, and a trace that
// gets its transaction later. Each asserts the verdict, the record's fields and the callback row.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { parseEther, type Address, type Hex } from 'viem'
import {
  deployRouter,
  deployToken,
  mine,
  mintToken,
  routerPayNative,
  sendNative,
  startAnvil,
  transferToken,
  type Anvil,
} from '../support/index.ts'
import { waitForReceipt } from '../support/deploy.ts'
import type { TestService } from '../support/service.ts'
import { engineAtHead, freshAddress, lower, NATIVE, readPayment, startEngineService, waitForFinal } from './support.ts'

let anvil: Anvil
let service: TestService
let apiKey: string
let otherKey: string
let router: Address
let usdc: Address
let counter = 0

before(async () => {
  anvil = await startAnvil()
  router = await deployRouter(anvil)
  usdc = await deployToken(anvil, 'USD Coin', 'USDC', 6)
  await mintToken(anvil, usdc, anvil.accounts[2]!.address, 1_000_000_000n)
  service = await startEngineService(anvil)
  ;({ apiKey } = await service.newAccount())
  ;({ apiKey: otherKey } = await service.newAccount())
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

/** POST /v2/payments without a nonce (and without a sender unless given). */
async function track(
  key: string,
  fields: Record<string, unknown>,
): Promise<{ secretId: string; status: number; record: Record<string, unknown> }> {
  const secretId = `nonceless-${process.pid}-${++counter}`
  const payload = {
    blockchain: 'ethereum',
    token: NATIVE,
    after_block: String(await anvil.publicClient.getBlockNumber()),
    secret_id: secretId,
    callback: 'https://merchant.example/callback',
    ...fields,
  }
  const response = await service.api(key, { method: 'POST', url: '/v2/payments', payload })
  assert.ok(response.statusCode === 201 || response.statusCode === 200, response.body)
  return { secretId, status: response.statusCode, record: response.json() }
}

const deliveriesOf = async (secretId: string): Promise<number> => {
  const rows = await service.database.db
    .selectFrom('deliveries')
    .innerJoin('trackings', 'trackings.id', 'deliveries.tracking_id')
    .select('deliveries.id')
    .where('trackings.secret_id', '=', secretId)
    .execute()
  return rows.length
}

test('created without nonce and sender: the record says so, a repeat answers 200, other fields 409', async () => {
  const receiver = freshAddress()
  const { secretId, status, record } = await track(apiKey, { receiver, amount: '1', deadline: '1999999999' })
  assert.equal(status, 201)
  assert.equal(record.sender, null)
  assert.equal(record.nonce, null)
  assert.equal(record.deadline, 1999999999)
  assert.equal(record.transaction, null)
  const again = await service.api(apiKey, {
    method: 'POST',
    url: '/v2/payments',
    payload: {
      blockchain: 'ethereum',
      token: NATIVE,
      receiver,
      amount: '1',
      deadline: 1999999999,
      after_block: record.after_block,
      secret_id: secretId,
      callback: 'https://merchant.example/callback',
    },
  })
  assert.equal(again.statusCode, 200, again.body)
  const other = await service.api(apiKey, {
    method: 'POST',
    url: '/v2/payments',
    payload: {
      blockchain: 'ethereum',
      token: NATIVE,
      receiver,
      amount: '2',
      after_block: record.after_block,
      secret_id: secretId,
      callback: 'https://merchant.example/callback',
    },
  })
  assert.equal(other.statusCode, 409, other.body)
  const bad = await service.api(apiKey, {
    method: 'POST',
    url: '/v2/payments',
    payload: {
      blockchain: 'ethereum',
      token: NATIVE,
      receiver,
      amount: '1',
      deadline: -5,
      after_block: '1',
      secret_id: 'bad-deadline',
      callback: 'https://merchant.example/callback',
    },
  })
  assert.equal(bad.statusCode, 400)
  assert.match(bad.body, /deadline/)
  const noSender = await service.api(apiKey, {
    method: 'POST',
    url: '/v2/payments',
    payload: {
      blockchain: 'ethereum',
      token: NATIVE,
      receiver,
      amount: '1',
      nonce: '3',
      after_block: '1',
      secret_id: 'nonce-no-sender',
      callback: 'https://merchant.example/callback',
    },
  })
  assert.equal(noSender.statusCode, 400)
  assert.match(noSender.body, /sender/)
})

test('sender-less native payment through a router: found by receiver; short and other-token payments ignored', async () => {
  const payer = anvil.accounts[3]!
  const receiver = freshAddress()
  const { secretId } = await track(apiKey, { receiver, amount: '1' })
  // Short, then another token to the receiver: neither is the payment, neither fails it.
  await sendNative(anvil, payer, receiver, parseEther('0.5'))
  await transferToken(anvil, usdc, anvil.accounts[2]!, receiver, 5_000_000n)
  await engineAtHead(service, anvil)
  assert.equal((await readPayment(service, apiKey, secretId)).status, 'pending')
  const paid = await routerPayNative(anvil, router, payer, { receiver, value: parseEther('1') })
  const final = await waitForFinal(service, apiKey, secretId)
  assert.equal(final.status, 'success')
  assert.equal(final.transaction, lower(paid.transactionHash))
  assert.equal(lower(String(final.sender)), lower(payer.address))
  const tx = await anvil.publicClient.getTransaction({ hash: paid.transactionHash })
  assert.equal(final.nonce, String(tx.nonce))
  assert.equal(final.deadline, null)
  assert.equal(await deliveriesOf(secretId), 1)
})

test('two trackings of one receiver and amount: paid by two transactions, in creation order', async () => {
  const payer = anvil.accounts[4]!
  const receiver = freshAddress()
  const first = await track(apiKey, { receiver, amount: '0.2', sender: payer.address })
  const second = await track(apiKey, { receiver, amount: '0.2' })
  const one = await sendNative(anvil, payer, receiver, parseEther('0.2'))
  const firstFinal = await waitForFinal(service, apiKey, first.secretId)
  assert.equal(firstFinal.transaction, lower(one.transactionHash))
  await engineAtHead(service, anvil)
  assert.equal((await readPayment(service, apiKey, second.secretId)).status, 'pending', 'one transaction pays one tracking of an account')
  const two = await sendNative(anvil, payer, receiver, parseEther('0.2'))
  const secondFinal = await waitForFinal(service, apiKey, second.secretId)
  assert.equal(secondFinal.status, 'success')
  assert.equal(secondFinal.transaction, lower(two.transactionHash))
  assert.equal(lower(String(secondFinal.sender)), lower(payer.address))
})

test('one transaction pays the trackings of two accounts, each judged on its own', async () => {
  const payer = anvil.accounts[5]!
  const receiver = freshAddress()
  const mine1 = await track(apiKey, { receiver, token: usdc, amount: '3' })
  const theirs = await track(otherKey, { receiver, token: usdc, amount: '3' })
  const paid = await transferToken(anvil, usdc, anvil.accounts[2]!, receiver, 3_000_000n)
  for (const [key, t] of [
    [apiKey, mine1],
    [otherKey, theirs],
  ] as const) {
    const final = await waitForFinal(service, key, t.secretId)
    assert.equal(final.status, 'success')
    assert.equal(final.transaction, lower(paid.transactionHash))
    assert.equal(lower(String(final.sender)), lower(anvil.accounts[2]!.address))
    assert.equal(await deliveriesOf(t.secretId), 1)
  }
  void payer
})

test('a deadline passes with no payment: TRACKING_TIMED_OUT; a payment after it is not the payment', async () => {
  const payer = anvil.accounts[6]!
  const receiver = freshAddress()
  const head = await anvil.publicClient.getBlock()
  const deadline = head.timestamp + 1_000n
  const { secretId } = await track(apiKey, { receiver, amount: '1', deadline: Number(deadline) })
  await anvil.rpc('evm_setNextBlockTimestamp', [`0x${(deadline + 1n).toString(16)}`])
  await sendNative(anvil, payer, receiver, parseEther('1'))
  const final = await waitForFinal(service, apiKey, secretId)
  assert.equal(final.status, 'failed')
  assert.equal(final.failed_reason, 'TRACKING_TIMED_OUT')
  assert.equal(final.transaction, null)
  assert.equal(final.sender, null)
  assert.equal(final.nonce, null)
  assert.equal(final.deadline, Number(deadline))
  assert.equal(await deliveriesOf(secretId), 1)
})

test('a reorg removes the payment before success; another payment later wins', async () => {
  const payer = anvil.accounts[7]!
  const receiver = freshAddress()
  const { secretId } = await track(apiKey, { receiver, amount: '1', confirmations: 3 })
  const hash = await payer.wallet.sendTransaction({ to: receiver, value: parseEther('1') })
  await waitForReceipt(anvil, hash)
  await engineAtHead(service, anvil)
  assert.equal((await readPayment(service, apiKey, secretId)).status, 'pending')
  await anvil.reorg(1)
  await assert.rejects(anvil.publicClient.getTransactionReceipt({ hash }))
  await mine(anvil, 2)
  await engineAtHead(service, anvil)
  const matches = await service.database.db.selectFrom('tracking_matches').selectAll().execute()
  assert.equal(matches.length, 0, 'searching again')
  // The removed transaction's nonce is free again: the payer pays anew (another transaction).
  const later: Hex = await payer.wallet.sendTransaction({ to: receiver, value: parseEther('1.5') })
  await waitForReceipt(anvil, later)
  await mine(anvil, 2)
  const final = await waitForFinal(service, apiKey, secretId)
  assert.equal(final.status, 'success')
  assert.equal(final.transaction, lower(later))
  assert.equal(await deliveriesOf(secretId), 1)
})

test('a trace that gets its transaction later: judged by it, sender and nonce filled in', async () => {
  const payer = anvil.accounts[8]!
  const receiver = freshAddress()
  const { secretId, record } = await track(apiKey, { receiver, amount: '0.3' })
  await anvil.rpc('evm_setAutomine', [false])
  let hash: Hex
  try {
    hash = await payer.wallet.sendTransaction({ to: receiver, value: parseEther('0.3') })
    const again = await service.api(apiKey, {
      method: 'POST',
      url: '/v2/payments',
      payload: {
        blockchain: 'ethereum',
        token: NATIVE,
        receiver,
        amount: '0.3',
        after_block: record.after_block,
        secret_id: secretId,
        callback: 'https://merchant.example/callback',
        transaction: hash,
      },
    })
    assert.equal(again.statusCode, 200, again.body)
    assert.equal(again.json().transaction, lower(hash))
  } finally {
    await anvil.rpc('evm_setAutomine', [true])
  }
  await mine(anvil, 1)
  const final = await waitForFinal(service, apiKey, secretId)
  assert.equal(final.status, 'success')
  assert.equal(final.transaction, lower(hash))
  assert.equal(lower(String(final.sender)), lower(payer.address))
  const tx = await anvil.publicClient.getTransaction({ hash })
  assert.equal(final.nonce, String(tx.nonce))
})

test('a trace created after its payment was mined and passed: found in the blocks passed', async () => {
  const payer = anvil.accounts[9]!
  const receiver = freshAddress()
  const afterBlock = await anvil.publicClient.getBlockNumber()
  const paid = await sendNative(anvil, payer, receiver, parseEther('0.4'))
  await mine(anvil, 1)
  await engineAtHead(service, anvil)
  const { secretId } = await track(apiKey, { receiver, amount: '0.4', after_block: String(afterBlock), sender: payer.address })
  const final = await waitForFinal(service, apiKey, secretId)
  assert.equal(final.status, 'success')
  assert.equal(final.transaction, lower(paid.transactionHash))
  assert.equal(lower(String(final.sender)), lower(payer.address))
  assert.equal(await deliveriesOf(secretId), 1)
})

test("a transaction that an account's nonce tracking consumes pays none of that account's traces", async () => {
  const payer = anvil.accounts[1]!
  const receiver = freshAddress()
  const nonce = await anvil.publicClient.getTransactionCount({ address: payer.address })
  const withNonce = await track(apiKey, { receiver, amount: '0.7', sender: payer.address, nonce: String(nonce) })
  const trace = await track(apiKey, { receiver, amount: '0.7' })
  const theirs = await track(otherKey, { receiver, amount: '0.7' })
  const paid = await sendNative(anvil, payer, receiver, parseEther('0.7'))
  const final = await waitForFinal(service, apiKey, withNonce.secretId)
  assert.equal(final.status, 'success')
  assert.equal(final.transaction, lower(paid.transactionHash))
  // Another account's trace is judged on its own: the same transaction pays it.
  assert.equal((await waitForFinal(service, otherKey, theirs.secretId)).transaction, lower(paid.transactionHash))
  await engineAtHead(service, anvil)
  const stillPending = await readPayment(service, apiKey, trace.secretId)
  assert.equal(stillPending.status, 'pending')
  assert.equal(stillPending.sender, null)
  assert.equal(stillPending.nonce, null)
})
