// The local check that lets the quorum trust a transaction's fields without asking more providers:
// real transactions of each type Anvil mines pass; any altered field or signature fails.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { parseEther, type Transaction } from 'viem'
import { checkSignedTransaction, checkTransactionHash, recoverTransactionSender } from '../../src/chain/signed-transaction.ts'
import { freshAddress } from '../engine/support.ts'
import { confirm, startAnvil, type Anvil } from '../support/index.ts'

let anvil: Anvil
const mined: Transaction[] = []

before(async () => {
  anvil = await startAnvil()
  const alice = anvil.accounts[1]!
  const kinds = [
    { type: 'eip1559' as const },
    { type: 'eip2930' as const, gasPrice: parseEther('0.00000002') },
    { type: 'legacy' as const, gasPrice: parseEther('0.00000002') },
  ]
  for (const kind of kinds) {
    const receipt = await confirm(
      anvil,
      await alice.wallet.sendTransaction({ to: freshAddress(), value: 12345n, data: '0xdeadbeef', ...kind }),
    )
    mined.push(await anvil.publicClient.getTransaction({ hash: receipt.transactionHash }))
  }
})
after(async () => anvil?.stop())

test('real transactions of each type hash to their hash and recover their sender', async () => {
  assert.deepEqual(
    mined.map((tx) => tx.type),
    ['eip1559', 'eip2930', 'legacy'],
  )
  for (const tx of mined) assert.equal(await checkSignedTransaction(tx), 'valid', tx.type)
})

test('a changed receiver, value, nonce, sender or signature is invalid', async () => {
  for (const tx of mined) {
    const altered = [
      { ...tx, to: freshAddress() },
      { ...tx, value: tx.value + 1n },
      { ...tx, nonce: tx.nonce + 1 },
      { ...tx, from: anvil.accounts[2]!.address },
      { ...tx, s: `0x${(BigInt(tx.s) - 1n).toString(16).padStart(64, '0')}` as const },
      { ...tx, input: '0x' as const },
    ]
    for (const lie of altered) assert.equal(await checkSignedTransaction(lie), 'invalid', tx.type)
  }
})

test('a type the check does not know is unsupported, not valid', async () => {
  assert.equal(await checkSignedTransaction({ ...mined[0]!, type: 'deposit' as never }), 'unsupported')
})

test('the hash check covers every signed field but not the sender, which the recovery gives', async () => {
  for (const tx of mined) {
    assert.equal(checkTransactionHash(tx), 'valid', tx.type)
    assert.equal(checkTransactionHash({ ...tx, value: tx.value + 1n }), 'invalid', tx.type)
    assert.equal(checkTransactionHash({ ...tx, to: freshAddress() }), 'invalid', tx.type)
    // Another sender hashes the same: the quorum takes the sender from each provider's receipt.
    assert.equal(checkTransactionHash({ ...tx, from: anvil.accounts[2]!.address }), 'valid', tx.type)
    assert.equal(await recoverTransactionSender({ ...tx, from: anvil.accounts[2]!.address }), tx.from.toLowerCase(), tx.type)
  }
})
