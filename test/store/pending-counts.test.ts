// Pending trackings per chain (the dashboard's overview and the metrics gauge) at any table size:
// exact while few, the planner's estimate past EXACT_PENDING_LIMIT, on PGlite and PostgreSQL alike.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { createAccount } from '../../src/store/accounts.ts'
import { countPendingTrackings, EXACT_PENDING_LIMIT } from '../../src/store/pending-counts.ts'
import { createTestDatabase, useTestDatabase } from '../support/database.ts'

let accountId: string
const database = useTestDatabase(async (db) => {
  accountId = (await createAccount(db, 'counts')).id
})

/** `n` trackings of `chain` in `status`, in one statement. */
async function insert(chain: string, status: string, n: number, tag: string, db = database.db, account = accountId): Promise<void> {
  await sql`
    INSERT INTO trackings (id, account_id, secret_id, shape, blockchain, sender, nonce, receiver, token, decimals,
      commitment, confirmations, after_block, amount, status, created_at, updated_at)
    SELECT ${tag} || g, ${account}, ${tag} || g, 'current', ${chain}, '0x' || md5(${tag} || g), g, '0xr', '0xt', 18,
      'confirmed', 1, 0, '1', ${status}, now(), now()
    FROM generate_series(1, ${n}::int) AS g`.execute(db)
}

test('few pending trackings are counted exactly, per chain; a chain without any is absent', async () => {
  await insert('ethereum', 'pending', 7, 'a')
  await insert('polygon', 'pending', 2, 'b')
  await insert('polygon', 'success', 30, 'c')
  await sql`ANALYZE trackings`.execute(database.db)
  const pending = await countPendingTrackings(database.db, ['ethereum', 'polygon', 'base'])
  assert.equal(pending.estimated, false)
  assert.deepEqual([...pending.counts].toSorted(), [
    ['ethereum', 7],
    ['polygon', 2],
  ])
})

test('past the exact limit the counts are the planner estimates per chain, from the chain-and-status statistics', async () => {
  await insert('ethereum', 'pending', 2 * EXACT_PENDING_LIMIT, 'd')
  await insert('polygon', 'pending', EXACT_PENDING_LIMIT / 2, 'e')
  await insert('ethereum', 'failed', EXACT_PENDING_LIMIT, 'f')
  await sql`ANALYZE trackings`.execute(database.db)
  const pending = await countPendingTrackings(database.db, ['ethereum', 'polygon', 'base'])
  assert.equal(pending.estimated, true)
  const near = (chain: string, exact: number) => {
    const count = pending.counts.get(chain)!
    assert.ok(Math.abs(count - exact) <= exact * 0.1, `${chain}: estimated ${count}, exactly ${exact}`)
  }
  near('ethereum', 2 * EXACT_PENDING_LIMIT + 7)
  near('polygon', EXACT_PENDING_LIMIT / 2 + 2)
  assert.ok(pending.counts.get('base')! <= 10, `a chain with none: estimated ${pending.counts.get('base')}`)
})

test('an estimate that says few is checked by an exact count that stops after the limit', async () => {
  // Statistics from when the table held few pending trackings, then many more inserted: the estimate
  // (scaled by the table's pages) and the capped count together still tell that the count is large.
  const fresh = await createTestDatabase()
  try {
    const account = (await createAccount(fresh.db, 'stale')).id
    await insert('ethereum', 'pending', 5, 'g', fresh.db, account)
    await sql`ANALYZE trackings`.execute(fresh.db)
    await insert('ethereum', 'pending', EXACT_PENDING_LIMIT + 50, 'h', fresh.db, account)
    const pending = await countPendingTrackings(fresh.db, ['ethereum'])
    assert.equal(pending.estimated, true, 'more than the limit is never reported as an exact count')
    assert.ok(pending.counts.get('ethereum')! > EXACT_PENDING_LIMIT, `estimated ${pending.counts.get('ethereum')}`)
  } finally {
    await fresh.close()
  }
})
