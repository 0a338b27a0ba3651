// A block's verdicts written in one transaction (completeTrackings): each tracking as if completed
// alone — final states stay final, links keep distinct confirmation times, callbacks get one
// delivery row each, stored matches go — and one failure writes none of them.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { createAccount } from '../../src/store/accounts.ts'
import { completeTrackings } from '../../src/store/complete-tracking.ts'
import { createLink } from '../../src/store/links.ts'
import { saveMatch } from '../../src/store/tracking-matches.ts'
import { createTestDatabase } from '../support/database.ts'
import { insertTestTracking, randomHash } from '../support/trackings.ts'

let database: Awaited<ReturnType<typeof createTestDatabase>>
before(async () => {
  database = await createTestDatabase()
})
after(async () => database?.close())

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

test("under a worker's lease, the delivery rows are that worker's from their first moment, and the block record goes in the same transaction", async () => {
  const db = database.db
  const account = await createAccount(db, 'handoff')
  const paid = await insertTestTracking(db, account.id, { callback: 'https://merchant.example/h' })
  const silent = await insertTestTracking(db, account.id, { callback: null })
  const now = new Date('2026-11-25T13:00:00.000Z')
  const lease = { claim: 'worker-a:claim-1', until: new Date('2026-11-25T13:01:00.000Z') }
  const written: string[] = []
  const results = await completeTrackings(
    db,
    [
      { id: paid.id, completion: success() },
      { id: silent.id, completion: { status: 'failed', failedReason: 'AMOUNT_MISMATCH' } },
    ],
    now,
    { lease, alsoWrite: async () => void written.push('block') },
  )
  assert.deepEqual(written, ['block'])
  assert.equal(results[1]!.deliveryId, null, 'no callback, no delivery row')
  const row = await db.selectFrom('deliveries').selectAll().where('tracking_id', '=', paid.id).executeTakeFirstOrThrow()
  assert.equal(results[0]!.deliveryId, row.id)
  assert.equal(row.claimed_by, lease.claim)
  assert.equal(new Date(row.locked_until!).toISOString(), lease.until.toISOString())
  // Not due for any other worker's claim until the lease ends (a worker that died with it in hand).
  assert.equal(new Date(row.next_attempt_at).toISOString(), lease.until.toISOString())
  assert.equal(row.state, 'due')
})
