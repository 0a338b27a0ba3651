// A block's verdicts written in one transaction (completeTrackings): each tracking as if completed
// alone — final states stay final, links keep distinct confirmation times, callbacks get one
// delivery row each, stored matches go — and one failure writes none of them.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql, type KyselyPlugin } from 'kysely'
import type { Tracking } from '../../src/domain/tracking.ts'
import { createAccount } from '../../src/store/accounts.ts'
import { chainBlockInsert } from '../../src/store/chain-blocks.ts'
import { acquireLease, LeadershipLostError } from '../../src/store/chain-leases.ts'
import { completeTrackings } from '../../src/store/complete-tracking.ts'
import { createLink } from '../../src/store/links.ts'
import { saveMatch } from '../../src/store/tracking-matches.ts'
import { useTestDatabase } from '../support/database.ts'
import { insertTestTracking, randomHash } from '../support/trackings.ts'

const database = useTestDatabase()

const success = () => ({ status: 'success' as const, transaction: randomHash() })

test('a batch completes each pending tracking once, in the order asked, with its delivery and without its match', async () => {
  const db = database.db
  const account = await createAccount(db, 'batch')
  const link = await createLink(db, account.id, 'shop')
  const now = new Date('2026-11-25T12:00:00.000Z')
  const [a, b, c, done] = await Promise.all([
    insertTestTracking(db, account.id, { linkId: link.id, callback: 'https://merchant.example/a' }),
    insertTestTracking(db, account.id, { linkId: link.id, callback: null }),
    insertTestTracking(db, account.id, { callback: 'https://merchant.example/c' }),
    insertTestTracking(db, account.id, { callback: 'https://merchant.example/d' }),
  ])
  await completeTrackings(db, [{ id: done!.id, completion: { status: 'failed', failedReason: 'TRACKING_TIMED_OUT' } }], now)
  await saveMatch(
    db,
    {
      trackingId: c!.id,
      chain: 'ethereum',
      blockNumber: 7n,
      blockHash: randomHash(),
      transaction: randomHash(),
      evidence: null,
      pendingHashes: null,
    },
    now,
  )
  const results = await completeTrackings(
    db,
    [
      { id: a!.id, completion: success() },
      { id: done!.id, completion: success() },
      { id: b!.id, completion: success() },
      { id: c!.id, completion: { status: 'failed', failedReason: 'AMOUNT_MISMATCH' }, dropMatch: true },
      { id: a!.id, completion: { status: 'failed', failedReason: 'FAILED' } },
    ],
    now,
  )
  assert.deepEqual(
    results.map((r) => r?.tracking.status),
    ['success', undefined, 'success', 'failed', undefined],
  )
  // Two successes of one link in the same millisecond: the second is placed just after the first.
  assert.deepEqual(
    [results[0]!.tracking.confirmedAt?.toISOString(), results[2]!.tracking.confirmedAt?.toISOString()],
    ['2026-11-25T12:00:00.000Z', '2026-11-25T12:00:00.001Z'],
  )
  const deliveries = await db.selectFrom('deliveries').select('tracking_id').where('reason', '=', 'completed').execute()
  assert.deepEqual(deliveries.map((d) => d.tracking_id).sort(), [a!.id, c!.id, done!.id].sort())
  assert.equal((await db.selectFrom('tracking_matches').select('tracking_id').where('tracking_id', '=', c!.id).execute()).length, 0)
})

test('one failing write in a batch writes none of it', async () => {
  const db = database.db
  const account = await createAccount(db, 'atomic')
  const first = await insertTestTracking(db, account.id, { callback: 'https://merchant.example/x' })
  const second = await insertTestTracking(db, account.id)
  // The second success's watch cannot be written (no block hash): the first one's status goes too.
  const broken = {
    status: 'success' as const,
    transaction: randomHash(),
    inclusion: { chain: 'ethereum', blockNumber: 1n, blockHash: undefined as never },
  }
  await assert.rejects(
    completeTrackings(
      db,
      [
        { id: first.id, completion: success() },
        { id: second.id, completion: broken },
      ],
      new Date(),
    ),
  )
  const rows = await db.selectFrom('trackings').select('status').where('id', 'in', [first.id, second.id]).execute()
  assert.deepEqual(
    rows.map((r) => r.status),
    ['pending', 'pending'],
  )
  assert.equal((await db.selectFrom('deliveries').select('id').where('tracking_id', '=', first.id).execute()).length, 0)
})

/** Counts the statements run through a database handle (BEGIN and COMMIT are the driver's, not counted). */
function countingStatements() {
  const counted = { statements: 0 }
  const plugin: KyselyPlugin = {
    // Once per query run (parts built into a larger statement are transformed too, but not run).
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      counted.statements++
      return args.result
    },
  }
  return { counted, plugin }
}

const block = (number: bigint) => ({
  number,
  hash: randomHash() as `0x${string}`,
  parentHash: randomHash() as `0x${string}`,
  timestamp: 1_700_000_000n + number,
})

/** The two forms of a batch: read under lock, then written (two statements), or written as the engine read it (one). */
const forms = [
  { name: 'read under lock', statements: 2, asRead: (_tracking: Tracking) => ({}) },
  { name: 'as read', statements: 1, asRead: (tracking: Tracking) => ({ asRead: tracking }) },
] as const

for (const form of forms) {
  test(`under a worker's lease and the chain's, a block's verdicts (${form.name}) take ${form.statements} statement(s): the delivery rows are that worker's from their first moment, and the block record goes with them`, async () => {
    const account = await createAccount(database.db, 'handoff')
    const paid = await insertTestTracking(database.db, account.id, { callback: 'https://merchant.example/h' })
    const silent = await insertTestTracking(database.db, account.id, { callback: null })
    const chain = `handoff-${form.statements}`
    const token = await acquireLease(database.db, chain, 'node-a', { ttlMs: 60_000, exclusive: false })
    const fence = { chain, holder: 'node-a', token: token! }
    const now = new Date('2026-11-25T13:00:00.000Z')
    const lease = { claim: 'worker-a:claim-1', until: new Date('2026-11-25T13:01:00.000Z') }
    const { counted, plugin } = countingStatements()
    const paying = success()
    const results = await completeTrackings(
      database.db.withPlugin(plugin),
      [
        {
          id: paid.id,
          completion: { ...paying, inclusion: { chain, blockNumber: 7n, blockHash: randomHash() } },
          dropMatch: true,
          ...form.asRead(paid),
        },
        { id: silent.id, completion: { status: 'failed', failedReason: 'AMOUNT_MISMATCH' }, ...form.asRead(silent) },
      ],
      now,
      { lease, fence, alsoWrite: (trx) => chainBlockInsert(trx, chain, block(7n)) },
    )
    // On the embedded database each statement is a turn of the main thread.
    assert.equal(counted.statements, form.statements)
    const db = database.db
    assert.equal((await db.selectFrom('chain_blocks').select('number').where('chain', '=', chain).execute()).length, 1)
    assert.equal(results[0]!.tracking.status, 'success')
    assert.equal(results[0]!.tracking.transaction, paying.transaction)
    assert.equal(results[0]!.tracking.confirmedAt?.toISOString(), now.toISOString())
    assert.equal(results[1]!.tracking.failedReason, 'AMOUNT_MISMATCH')
    assert.equal(results[1]!.deliveryId, null, 'no callback, no delivery row')
    assert.equal((await db.selectFrom('success_watches').select('block_number').where('tracking_id', '=', paid.id).execute()).length, 1)
    const row = await db.selectFrom('deliveries').selectAll().where('tracking_id', '=', paid.id).executeTakeFirstOrThrow()
    assert.equal(results[0]!.deliveryId, row.id)
    assert.equal(row.claimed_by, lease.claim)
    assert.equal(new Date(row.locked_until!).toISOString(), lease.until.toISOString())
    // Not due for any other worker's claim until the lease ends (a worker that died with it in hand).
    assert.equal(new Date(row.next_attempt_at).toISOString(), lease.until.toISOString())
    assert.equal(row.state, 'due')
    assert.equal((await db.selectFrom('deliveries').select('id').where('tracking_id', '=', silent.id).execute()).length, 0)
  })
}

test('a batch written as read, one of whose trackings was completed meanwhile, is written the long way: the others complete, that one is left as it is', async () => {
  const db = database.db
  const account = await createAccount(db, 'meanwhile')
  const [done, open] = await Promise.all([
    insertTestTracking(db, account.id, { callback: 'https://merchant.example/m' }),
    insertTestTracking(db, account.id, { callback: 'https://merchant.example/m' }),
  ])
  const chain = 'meanwhile-chain'
  const token = await acquireLease(db, chain, 'node-a', { ttlMs: 60_000, exclusive: false })
  const fence = { chain, holder: 'node-a', token: token! }
  // Completed by another path after the engine read it as pending.
  await completeTrackings(db, [{ id: done.id, completion: { status: 'failed', failedReason: 'TRACKING_TIMED_OUT' } }], new Date())
  const results = await completeTrackings(
    db,
    [done, open].map((tracking) => ({ id: tracking.id, completion: success(), asRead: tracking })),
    new Date(),
    { fence, alsoWrite: (trx) => chainBlockInsert(trx, chain, block(9n)) },
  )
  assert.equal(results[0], undefined)
  assert.equal(results[1]!.tracking.status, 'success')
  const rows = await db.selectFrom('trackings').select(['id', 'status', 'failed_reason']).where('id', 'in', [done.id, open.id]).execute()
  assert.deepEqual(
    new Map(rows.map((r) => [r.id, r.failed_reason ?? r.status])),
    new Map([
      [done.id, 'TRACKING_TIMED_OUT'],
      [open.id, 'success'],
    ]),
  )
  assert.equal(
    (await db.selectFrom('deliveries').select('id').where('tracking_id', '=', done.id).execute()).length,
    1,
    'its own delivery only',
  )
  assert.equal((await db.selectFrom('deliveries').select('id').where('tracking_id', '=', open.id).execute()).length, 1)
  assert.equal((await db.selectFrom('chain_blocks').select('number').where('chain', '=', chain).execute()).length, 1)
})

for (const form of forms) {
  test(`a node that lost the chain's lease writes none of a block's verdicts (${form.name}), nor the block`, async () => {
    const db = database.db
    const account = await createAccount(db, 'fenced')
    const chain = `fenced-${form.statements}`
    const tracking = await insertTestTracking(db, account.id, { callback: 'https://merchant.example/f' })
    const token = await acquireLease(db, chain, 'node-a', { ttlMs: 60_000, exclusive: false })
    await sql`UPDATE chain_leases SET expires_at = now() - interval '1 second' WHERE chain = chain`.execute(db)
    const fence = { chain, holder: 'node-a', token: token! }
    const write = (ids: string[]) =>
      completeTrackings(
        db,
        ids.map((id) => ({ id, completion: success(), ...(id === tracking.id ? form.asRead(tracking) : {}) })),
        new Date(),
        { fence, alsoWrite: (trx) => chainBlockInsert(trx, chain, block(3n)) },
      )
    await assert.rejects(write([tracking.id]), LeadershipLostError)
    // No row to lock: the lease is still checked before the block is recorded.
    await assert.rejects(write(['no-such-tracking']), LeadershipLostError)
    const row = await db.selectFrom('trackings').select('status').where('id', '=', tracking.id).executeTakeFirstOrThrow()
    assert.equal(row.status, 'pending')
    assert.equal((await db.selectFrom('deliveries').select('id').where('tracking_id', '=', tracking.id).execute()).length, 0)
    assert.equal((await db.selectFrom('chain_blocks').select('number').where('chain', '=', chain).execute()).length, 0)
  })
}

test("a batch written as read whose nonce-less success names a sender and nonce another of the account's trackings holds is written the long way: that one stays pending, its match dropped", async () => {
  const db = database.db
  const account = await createAccount(db, 'identity')
  const holder = await insertTestTracking(db, account.id, { sender: '0x00000000000000000000000000000000000000aa', nonce: 4n })
  const [trace, other] = await Promise.all([
    insertTestTracking(db, account.id, { sender: null, nonce: null, nonceless: true }),
    insertTestTracking(db, account.id, { callback: null }),
  ])
  await saveMatch(
    db,
    {
      trackingId: trace.id,
      chain: 'ethereum',
      blockNumber: 5n,
      blockHash: randomHash(),
      transaction: randomHash(),
      evidence: { given: null, consumer: null },
      pendingHashes: null,
    },
    new Date(),
  )
  const results = await completeTrackings(
    db,
    [
      { id: trace.id, completion: { ...success(), identity: { sender: holder.sender!, nonce: 4n } }, asRead: trace },
      { id: other.id, completion: success(), asRead: other },
    ],
    new Date(),
  )
  assert.equal(results[0], undefined)
  assert.equal(results[1]!.tracking.status, 'success')
  const row = await db.selectFrom('trackings').select(['status', 'sender', 'nonce']).where('id', '=', trace.id).executeTakeFirstOrThrow()
  assert.deepEqual(row, { status: 'pending', sender: null, nonce: null })
  assert.equal((await db.selectFrom('tracking_matches').select('tracking_id').where('tracking_id', '=', trace.id).execute()).length, 0)
})
