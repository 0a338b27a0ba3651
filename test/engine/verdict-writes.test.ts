// The write side of a verdict against a real database: the canonical re-check right before the
// final write holds back failed verdicts as it does successes, and a watched success whose block
// another block replaced (seen on a new block, without a reorg event: e.g. a success the fast path
// found on a fork the follower never held) is announced once and its watch ends.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import pino from 'pino'
import { createMetrics } from '../../src/common/metrics.ts'
import { NATIVE_TOKEN, type Judgement, type MinedTransaction } from '../../src/domain/judge.ts'
import { createEngineMetrics } from '../../src/engine/engine-metrics.ts'
import { expectationOf } from '../../src/engine/expectation.ts'
import { createSuccessWatcher } from '../../src/engine/success-watch.ts'
import { createVerdicts } from '../../src/engine/verdicts.ts'
import type { DeliveryHandoff } from '../../src/store/deliveries.ts'
import { createTrackingEvents, type RevertedSuccess } from '../../src/common/tracking-events.ts'
import { createAccount } from '../../src/store/accounts.ts'
import { findSuccessWatches } from '../../src/store/success-watches.ts'
import type { TrackingMatch } from '../../src/store/tracking-matches.ts'
import { useTestDatabase } from '../support/database.ts'
import { insertTestTracking, randomHash } from '../support/trackings.ts'

let accountId: string
const database = useTestDatabase(async (db) => {
  accountId = (await createAccount(db, 'verdict writes')).id
})
const events = createTrackingEvents()
const logger = pino({ level: 'silent' })
const registry = createMetrics().registry
const metrics = createEngineMetrics(registry, { now: () => new Date(), chains: ['ethereum'], countPending: async () => new Map() })

const completed: string[] = []
events.on('completed', (tracking) => completed.push(tracking.id))
const reverted: RevertedSuccess[] = []
events.on('reverted', (event) => reverted.push(event))

function verdictsWith(canonical: boolean, deliveries?: DeliveryHandoff) {
  return createVerdicts({
    chain: 'ethereum',
    db: database.db,
    events,
    clock: () => new Date(),
    logger,
    metrics,
    isCanonical: async () => canonical,
    deliveries,
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
  // Block 200 arrives with another hash than the one the success rests on; block 201 is final.
  const block200 = { number: 200n, hash: randomHash() }
  const watches = await watcher.read(block200, 201n)
  assert.deepEqual(watches.map((w) => w.trackingId).sort(), [replaced.tracking.id, kept.tracking.id].sort())
  await watcher.check(watches, block200, 201n)
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

/** A follower's window holding `blocks` (one per height). */
const windowOf = (blocks: { number: bigint; hash: string }[]) => ({
  holds: (number: bigint, hash: string) => {
    const held = blocks.find((block) => block.number === number)
    return held === undefined ? undefined : held.hash === hash
  },
  blocks: () => blocks,
})

test('a block reads the watches it acts on: reverted, final, or on a block replaced in the window or by itself; not a canonical one to be final', async () => {
  await database.db.deleteFrom('success_watches').execute() // the earlier tests' reverted watch
  const verdicts = verdictsWith(true)
  const watchAt = async (block: bigint) => {
    const { tracking, match } = await trackingWithMatch(block)
    await verdicts.apply(tracking, expectationOf(tracking), { status: 'success', transaction: match.transaction }, match, false)
    return { id: tracking.id, hash: match.blockHash.toLowerCase() }
  }
  const final = await watchAt(400n)
  const canonical = await watchAt(410n)
  const replaced = await watchAt(411n)
  const late = await watchAt(405n) // a fast path's success on a fork the follower never held, written for an older block
  const current = await watchAt(412n)
  const ahead = await watchAt(413n) // above the block being processed: nothing known of it yet
  const window = windowOf([
    { number: 405n, hash: randomHash() },
    { number: 410n, hash: canonical.hash },
    { number: 411n, hash: randomHash() },
  ])
  const watcher = createSuccessWatcher({ chain: 'ethereum', db: database.db, events, logger, metrics })
  const idsAt = async (block: { number: bigint; hash: string }, finalized: bigint) =>
    (await watcher.read(block, finalized, window)).map((w) => w.trackingId).sort()

  const block412 = { number: 412n, hash: current.hash }
  assert.deepEqual(await idsAt(block412, 400n), [final.id, late.id, replaced.id].sort(), 'final, and replaced in the window')
  assert.deepEqual(
    await idsAt({ number: 412n, hash: randomHash() }, 399n),
    [current.id, late.id, replaced.id].sort(),
    'replaced by the block itself',
  )
  assert.deepEqual(await idsAt(block412, 410n), [final.id, late.id, canonical.id, replaced.id].sort(), 'final as finality moves')
  assert.deepEqual(
    await idsAt({ number: 412n, hash: current.hash.toUpperCase().replace('0X', '0x') }, 400n),
    [final.id, late.id, replaced.id].sort(),
    'the block compared as the window compares it',
  )

  await watcher.check(await watcher.read(block412, 400n, window), block412, 400n, undefined, window)
  assert.deepEqual(
    reverted
      .slice(-2)
      .map((e) => e.tracking.id)
      .sort(),
    [late.id, replaced.id].sort(),
    'the replaced ones announced',
  )
  assert.deepEqual(await idsAt(block412, 400n), [late.id, replaced.id].sort(), 'the final one ended; the reverted ones read at every block')
  await watcher.reorg(412n) // block 413 left the chain: its watch is reverted, and watched for the transaction's re-mining
  assert.deepEqual(await idsAt({ number: 413n, hash: randomHash() }, 400n), [ahead.id, late.id, replaced.id].sort())
  await database.db.deleteFrom('success_watches').where('reverted_at', 'is not', null).execute()
  assert.deepEqual(await idsAt({ number: 414n, hash: randomHash() }, 420n), [canonical.id, current.id].sort(), 'every other watch final')
})

test("a final verdict's callback is on its way before the verdict's completed event and log", async () => {
  const order: string[] = []
  const handoff: DeliveryHandoff = {
    lease: (now) => ({ claim: 'verdict-writes', until: new Date(now.getTime() + 60_000) }),
    // As the worker's, it resolves once the requests are handed to the sender, later than the call; here in a
    // microtask, not a turn of the event loop: the writer waits for it at most 20 ms, which a loaded machine
    // that deschedules the test for longer would let pass first.
    take: (deliveries) =>
      Promise.resolve().then(() => {
        order.push(...deliveries.map((d) => `on its way ${d.trackingId}`))
      }),
  }
  const onCompleted = (tracking: { id: string }) => order.push(`completed ${tracking.id}`)
  events.on('completed', onCompleted)
  try {
    const { tracking, match } = await trackingWithMatch(200n)
    await database.db
      .updateTable('trackings')
      .set({ callback: 'https://merchant.example/callback' })
      .where('id', '=', tracking.id)
      .execute()
    const verdicts = verdictsWith(true, handoff)
    const failed: Judgement = { status: 'failed', reason: 'RECEIVER_MISMATCH', transaction: match.transaction }
    await verdicts.apply({ ...tracking, callback: 'https://merchant.example/callback' }, expectationOf(tracking), failed, match, false)
    assert.deepEqual(order, [`on its way ${tracking.id}`, `completed ${tracking.id}`])
  } finally {
    events.off('completed', onCompleted)
  }
})
