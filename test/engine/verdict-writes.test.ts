// The write side of a verdict against a real database: the canonical re-check right before the
// final write holds back failed verdicts as it does successes, and a watched success whose block
// another block replaced (seen on a new block, without a reorg event: e.g. a success the fast path
// found on a fork the follower never held) is announced once and its watch ends.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import pino from 'pino'
import { createMetrics } from '../../src/common/metrics.ts'
import { NATIVE_TOKEN, type Judgement, type MinedTransaction } from '../../src/domain/judge.ts'
import { createEngineMetrics } from '../../src/engine/engine-metrics.ts'
import { expectationOf } from '../../src/engine/expectation.ts'
import { createSuccessWatcher } from '../../src/engine/success-watch.ts'
import { createVerdicts } from '../../src/engine/verdicts.ts'
import { createTrackingEvents, type RevertedSuccess } from '../../src/common/tracking-events.ts'
import { createAccount } from '../../src/store/accounts.ts'
import { findSuccessWatches } from '../../src/store/success-watches.ts'
import type { TrackingMatch } from '../../src/store/tracking-matches.ts'
import { createTestDatabase } from '../support/database.ts'
import { insertTestTracking, randomHash } from '../support/trackings.ts'

let database: Awaited<ReturnType<typeof createTestDatabase>>
let accountId: string
const events = createTrackingEvents()
const logger = pino({ level: 'silent' })
const registry = createMetrics().registry
const metrics = createEngineMetrics(registry, { now: () => new Date(), chains: ['ethereum'], countPending: async () => new Map() })

before(async () => {
  database = await createTestDatabase()
  accountId = (await createAccount(database.db, 'verdict writes')).id
})
after(async () => {
  await database?.close()
})

const completed: string[] = []
events.on('completed', (tracking) => completed.push(tracking.id))
const reverted: RevertedSuccess[] = []
events.on('reverted', (event) => reverted.push(event))

function verdictsWith(canonical: boolean) {
  return createVerdicts({
    chain: 'ethereum',
    db: database.db,
    events,
    clock: () => new Date(),
    logger,
    metrics,
    isCanonical: async () => canonical,
  })
}

const statusOf = async (id: string) =>
  (await database.db.selectFrom('trackings').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status

async function trackingWithMatch(blockNumber: bigint) {
  const tracking = await insertTestTracking(database.db, accountId, { token: NATIVE_TOKEN, confirmations: 1 })
  const mined: MinedTransaction = {
    hash: tracking.transaction!,
    from: tracking.sender!.toLowerCase(),
    nonce: tracking.nonce!,
    reverted: false,
    blockNumber,
    blockHash: randomHash(),
    transfers: [],
  }
  const match: TrackingMatch = {
    trackingId: tracking.id,
    chain: 'ethereum',
    blockNumber,
    blockHash: mined.blockHash,
    transaction: mined.hash,
    evidence: { given: mined, consumer: mined },
    pendingHashes: null,
  }
  return { tracking, match }
}

test('a failed verdict on a block the RPC no longer holds is not written', async () => {
  const { tracking, match } = await trackingWithMatch(100n)
  const failed: Judgement = { status: 'failed', reason: 'RECEIVER_MISMATCH', transaction: match.transaction }
  await verdictsWith(false).apply(tracking, expectationOf(tracking), failed, match, false)
  assert.equal(await statusOf(tracking.id), 'pending', 'held back: its block left the chain')
  assert.ok(!completed.includes(tracking.id))

  await verdictsWith(true).apply(tracking, expectationOf(tracking), failed, match, false)
  assert.equal(await statusOf(tracking.id), 'failed')
  assert.ok(completed.includes(tracking.id))
})

test('a success by confirmations is watched; one on a replaced block is announced once, a final one just ends', async () => {
  const verdicts = verdictsWith(true)
  const replaced = await trackingWithMatch(200n)
  const kept = await trackingWithMatch(201n)
  for (const { tracking, match } of [replaced, kept]) {
    await verdicts.apply(tracking, expectationOf(tracking), { status: 'success', transaction: match.transaction }, match, false)
  }
  const watcher = createSuccessWatcher({ chain: 'ethereum', db: database.db, events, logger, metrics })
  const watches = await watcher.read(200n, 0n)
  assert.deepEqual(watches.map((w) => w.trackingId).sort(), [replaced.tracking.id, kept.tracking.id].sort())

  // Block 200 arrives with another hash than the one the success rests on; block 201 is final.
  await watcher.check(watches, { number: 200n, hash: randomHash() }, 201n)
  assert.deepEqual(
    reverted.map((e) => e.tracking.id),
    [replaced.tracking.id],
  )
  assert.equal(reverted[0]!.transaction, replaced.match.transaction.toLowerCase())
  assert.equal(reverted[0]!.blockNumber, 200n)
  assert.equal(await statusOf(replaced.tracking.id), 'success', 'success is final')
  assert.deepEqual(await findSuccessWatches(database.db, 'ethereum'), [], 'both watches ended')
  const text = await registry.metrics()
  assert.match(text, /paywatch_reverted_after_success_total\{chain="ethereum"\} 1\b/)

  // Noticed again (a reorg event after the block check): not announced twice.
  await watcher.reorg(100n)
  await watcher.check(watches, { number: 200n, hash: randomHash() }, 150n)
  assert.equal(reverted.length, 1)
})

test('a success by finality is not watched (its block is final already)', async () => {
  const { tracking, match } = await trackingWithMatch(300n)
  const finalized = { ...tracking, commitment: 'finalized' as const }
  await verdictsWith(true).apply(finalized, expectationOf(finalized), { status: 'success', transaction: match.transaction }, match, false)
  assert.equal(await statusOf(tracking.id), 'success')
  assert.deepEqual(await findSuccessWatches(database.db, 'ethereum'), [])
})

test('the watches are read whole at first, when finality moves, after a reorg and every 8 blocks; between, only the new blocks', async () => {
  await database.db.deleteFrom('success_watches').execute() // the earlier tests' reverted watch
  const verdicts = verdictsWith(true)
  const watchAt = async (block: bigint) => {
    const { tracking, match } = await trackingWithMatch(block)
    await verdicts.apply(tracking, expectationOf(tracking), { status: 'success', transaction: match.transaction }, match, false)
    return tracking.id
  }
  const old = await watchAt(400n)
  const watcher = createSuccessWatcher({ chain: 'ethereum', db: database.db, events, logger, metrics })
  const idsAt = async (block: bigint, finalized: bigint) => (await watcher.read(block, finalized)).map((w) => w.trackingId).sort()

  assert.deepEqual(await idsAt(410n, 300n), [old], 'the first read is whole')
  const previous = await watchAt(410n)
  const current = await watchAt(411n)
  assert.deepEqual(await idsAt(411n, 300n), [previous, current].sort(), 'then the watches of the block before the last read and above')
  const late = await watchAt(405n) // a fast path's success of a payment mined before its tracking
  assert.deepEqual(await idsAt(412n, 300n), [current], 'an older block written meanwhile waits for the next whole read')
  assert.deepEqual(await idsAt(413n, 301n), [old, previous, current, late].sort(), 'finality moved: whole')
  assert.deepEqual(await idsAt(414n, 301n), [], 'nothing new')
  await watcher.reorg(500n)
  assert.deepEqual((await idsAt(415n, 301n)).length, 4, 'after a reorg: whole')
  for (let block = 416n; block < 423n; block++) assert.deepEqual(await idsAt(block, 301n), [], `block ${block}: nothing new`)
  assert.deepEqual((await idsAt(423n, 301n)).length, 4, '8 blocks after the last whole read: whole')
  assert.deepEqual((await idsAt(423n, 301n)).length, 4, 'the same block again (a replay): whole')
  await watcher.reorg(410n) // block 411 left the chain: its watch is reverted, and watched for the transaction's re-mining
  assert.deepEqual((await idsAt(424n, 301n)).length, 4, 'after a reorg: whole')
  assert.deepEqual(await idsAt(425n, 301n), [current], 'a reverted watch is read at every block')
  await watcher.check(await watcher.read(426n, 420n), { number: 426n, hash: randomHash() }, 420n)
  assert.deepEqual(await findSuccessWatches(database.db, 'ethereum'), [], 'every watch final')
})
