// A block's candidates and what its chain has pending, in one statement (block-candidates.ts): the pending
// trackings its (sender, nonce) pairs or hashes name, each once, and the kinds also for a block without any.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { NATIVE_TOKEN } from '../../src/domain/judge.ts'
import { createAccount } from '../../src/store/accounts.ts'
import { completeTracking } from '../../src/store/complete-tracking.ts'
import { findBlockCandidates } from '../../src/store/block-candidates.ts'
import { useTestDatabase } from '../support/database.ts'
import { insertTestTracking, randomAddress, randomHash } from '../support/trackings.ts'

const database = useTestDatabase()
/** The block's timestamp (Unix seconds). */
const NOW = 1_800_000_000n

test('the candidates are the pending trackings a block names by sender and nonce or by hash, each once', async () => {
  const db = database.db
  const account = await createAccount(db, 'candidates')
  const sender = randomAddress()
  const byNonce = await insertTestTracking(db, account.id, { blockchain: 'cand-chain', sender, nonce: 3n, transaction: null })
  const byHash = await insertTestTracking(db, account.id, { blockchain: 'cand-chain' })
  const done = await insertTestTracking(db, account.id, { blockchain: 'cand-chain', sender, nonce: 4n, transaction: null })
  await completeTracking(db, done.id, { status: 'failed', failedReason: 'TRACKING_TIMED_OUT' }, new Date())
  const elsewhere = await insertTestTracking(db, account.id, { blockchain: 'other-chain', sender, nonce: 3n, transaction: null })

  const paying = { sender: sender.toUpperCase().replace('0X', '0x'), nonce: 3n, hash: randomHash() }
  const found = await findBlockCandidates(
    db,
    'cand-chain',
    [
      paying,
      { sender: randomAddress(), nonce: 9n, hash: byHash.transaction!.toUpperCase().replace('0X', '0x') },
      { sender, nonce: 4n, hash: randomHash() },
      paying,
    ],
    NOW,
  )
  assert.deepEqual(found.candidates.map((t) => t.id).sort(), [byNonce.id, byHash.id].sort(), 'pending ones of this chain, once each')
  assert.equal(found.candidates.find((t) => t.id === byNonce.id)?.nonce, 3n, 'read as a tracking')
  assert.ok(!found.candidates.some((t) => t.id === elsewhere.id || t.id === done.id))
  assert.deepEqual(found.pending, { any: true, traces: false, nativeTraces: false, pastDeadline: false })
})

test('the pending kinds are answered with or without candidates, and without transactions', async () => {
  const db = database.db
  const empty = await findBlockCandidates(db, 'kinds-chain', [], NOW)
  assert.deepEqual(empty, { candidates: [], pending: { any: false, traces: false, nativeTraces: false, pastDeadline: false } })

  const account = await createAccount(db, 'kinds')
  const trace = { blockchain: 'kinds-chain', nonceless: true, transaction: null, nonce: null }
  await insertTestTracking(db, account.id, { ...trace, token: randomAddress() })
  const tokenTrace = await findBlockCandidates(db, 'kinds-chain', [{ sender: randomAddress(), nonce: 1n, hash: randomHash() }], NOW)
  assert.deepEqual(tokenTrace, { candidates: [], pending: { any: true, traces: true, nativeTraces: false, pastDeadline: false } })

  await insertTestTracking(db, account.id, { ...trace, token: NATIVE_TOKEN.toUpperCase().replace('0X', '0x') })
  const nativeTrace = await findBlockCandidates(db, 'kinds-chain', [], NOW)
  assert.deepEqual(
    nativeTrace.pending,
    { any: true, traces: true, nativeTraces: true, pastDeadline: false },
    'whatever the case of its token',
  )
})

test('a tracking without a nonce past its deadline is no candidate of a later block, and the kinds say one is pending', async () => {
  const db = database.db
  const account = await createAccount(db, 'deadlines')
  const sender = randomAddress()
  const named = { blockchain: 'deadline-chain', nonceless: true, sender, nonce: 5n, deadline: NOW - 1n }
  const past = await insertTestTracking(db, account.id, named)
  const due = await insertTestTracking(db, account.id, { ...named, nonce: 6n, deadline: NOW })
  const withNonce = await insertTestTracking(db, account.id, { ...named, nonceless: false, nonce: 7n })
  const block = [past, due, withNonce].map((t) => ({ sender, nonce: t.nonce!, hash: t.transaction! }))
  const found = await findBlockCandidates(db, 'deadline-chain', block, NOW)
  assert.deepEqual(
    found.candidates.map((t) => t.id).sort(),
    [due.id, withNonce.id].sort(),
    'a block at the deadline still pays; a deadline only binds a tracking without a nonce',
  )
  assert.equal(found.pending.pastDeadline, true)
  const earlier = await findBlockCandidates(db, 'deadline-chain', block, NOW - 1n)
  assert.equal(earlier.candidates.length, 3)
  assert.equal(earlier.pending.pastDeadline, false)
})
