// A payment without a nonce that names its transaction, with a deadline (docs/api.md, "Payments without a
// nonce"): it has found no payment when the first block past the deadline reaches its commitment, and fails
// TRACKING_TIMED_OUT then, whether its transaction was never mined or mined past the deadline; mined by the
// deadline, it is judged as every payment is. End to end on Anvil through the real service.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { parseEther, type Hex } from 'viem'
import { mine, sendNative, startAnvil, type Anvil } from '../support/index.ts'
import { randomHash } from '../support/trackings.ts'
import type { TestService } from '../support/service.ts'
import { engineAtHead, freshAddress, lower, NATIVE, readPayment, startEngineService, waitFor, waitForFinal } from './support.ts'

let anvil: Anvil
let service: TestService
let apiKey: string
let counter = 0

before(async () => {
  anvil = await startAnvil()
  service = await startEngineService(anvil)
  ;({ apiKey } = await service.newAccount())
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

/** POST /v2/payments without a nonce or sender, naming `transaction`, with `deadline`. */
async function track(fields: { receiver: string; transaction: string; deadline: bigint; afterBlock?: bigint }): Promise<string> {
  const secretId = `named-deadline-${process.pid}-${++counter}`
  const response = await service.api(apiKey, {
    method: 'POST',
    url: '/v2/payments',
    payload: {
      blockchain: 'ethereum',
      token: NATIVE,
      receiver: fields.receiver,
      amount: '1',
      after_block: String(fields.afterBlock ?? (await anvil.publicClient.getBlockNumber())),
      secret_id: secretId,
      transaction: fields.transaction,
      deadline: String(fields.deadline),
      callback: 'https://merchant.example/callback',
    },
  })
  assert.equal(response.statusCode, 201, response.body)
  return secretId
}

/** The next block Anvil mines carries `timestamp`. */
const nextBlockAt = (timestamp: bigint) => anvil.rpc('evm_setNextBlockTimestamp', [`0x${timestamp.toString(16)}`])

test('its transaction never mined: TRACKING_TIMED_OUT at the first block past the deadline; the record keeps the hash', async () => {
  const deadline = (await anvil.publicClient.getBlock()).timestamp + 1_000n
  const named = randomHash()
  const secretId = await track({ receiver: freshAddress(), transaction: named, deadline })
  await checked(secretId)
  await mine(anvil, 1)
  await engineAtHead(service, anvil)
  assert.equal((await readPayment(service, apiKey, secretId)).status, 'pending', 'a block before the deadline')
  await nextBlockAt(deadline + 1n)
  await mine(anvil, 1)
  const final = await waitForFinal(service, apiKey, secretId)
  assert.equal(final.status, 'failed')
  assert.equal(final.failed_reason, 'TRACKING_TIMED_OUT')
  assert.equal(final.transaction, named)
  assert.deepEqual([final.sender, final.nonce], [null, null])
})

test('its transaction mined in the first block past the deadline: not the payment, TRACKING_TIMED_OUT', async () => {
  const payer = anvil.accounts[3]!
  const receiver = freshAddress()
  const deadline = (await anvil.publicClient.getBlock()).timestamp + 1_000n
  await anvil.rpc('evm_setAutomine', [false])
  let hash: Hex
  try {
    hash = await payer.wallet.sendTransaction({ to: receiver, value: parseEther('1') })
    const secretId = await track({ receiver, transaction: hash, deadline })
    // Seen while pending: its sender and nonce become the tracking's.
    await waitFor('its sender and nonce', async () => ((await readPayment(service, apiKey, secretId)).nonce !== null ? true : undefined))
    await checked(secretId)
    await nextBlockAt(deadline + 1n)
    await mine(anvil, 1)
    const final = await waitForFinal(service, apiKey, secretId)
    assert.equal(final.status, 'failed')
    assert.equal(final.failed_reason, 'TRACKING_TIMED_OUT')
    assert.equal(final.transaction, lower(hash))
    assert.equal(lower(String(final.sender)), lower(payer.address))
  } finally {
    await anvil.rpc('evm_setAutomine', [true])
  }
})

test('its transaction mined past the deadline before the tracking was stored: TRACKING_TIMED_OUT, not success', async () => {
  const payer = anvil.accounts[4]!
  const receiver = freshAddress()
  const afterBlock = await anvil.publicClient.getBlockNumber()
  const deadline = (await anvil.publicClient.getBlock()).timestamp + 1_000n
  await nextBlockAt(deadline + 1n)
  const paid = await sendNative(anvil, payer, receiver, parseEther('1'))
  await engineAtHead(service, anvil)
  const secretId = await track({ receiver, transaction: paid.transactionHash, deadline, afterBlock })
  await checked(secretId)
  await mine(anvil, 1)
  const final = await waitForFinal(service, apiKey, secretId)
  assert.equal(final.status, 'failed')
  assert.equal(final.failed_reason, 'TRACKING_TIMED_OUT')
})

test('its transaction mined by the deadline: success, also once later blocks pass the deadline', async () => {
  const payer = anvil.accounts[5]!
  const receiver = freshAddress()
  const deadline = (await anvil.publicClient.getBlock()).timestamp + 1_000n
  await nextBlockAt(deadline)
  const paid = await sendNative(anvil, payer, receiver, parseEther('1'))
  const secretId = await track({ receiver, transaction: paid.transactionHash, deadline, afterBlock: paid.blockNumber - 1n })
  await mine(anvil, 1)
  const final = await waitForFinal(service, apiKey, secretId)
  assert.equal(final.status, 'success')
  assert.equal(final.transaction, lower(paid.transactionHash))
})

/**
 * The tracking's check of the chain before it was stored is done (its owed_checks row gone): until then the
 * follower leaves its deadline to that check, which may find a payment mined before it.
 */
async function checked(secretId: string): Promise<void> {
  await waitFor(`the check of ${secretId}`, async () => {
    const owed = await service.database.db
      .selectFrom('owed_checks')
      .innerJoin('trackings', 'trackings.id', 'owed_checks.tracking_id')
      .select('owed_checks.tracking_id')
      .where('trackings.secret_id', '=', secretId)
      .executeTakeFirst()
    return owed === undefined ? true : undefined
  })
}
