// The checks owed to new trackings (owed-checks.ts, migration 0039): every pending tracking is stored with
// one; a trace's is a search from the block after its `after_block`, owed to the follower at once, the
// others' once they are old enough that the storing node would have checked them; a search that stopped short
// moves its start on and is not settled by the run that started it from the earlier block.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createAccount } from '../../src/store/accounts.ts'
import { completeTracking } from '../../src/store/complete-tracking.ts'
import { sql } from 'kysely'
import { findOwedChecks, findOwedSearchStart, oweSearchFrom, settleOwedChecks, settleOwedSearch } from '../../src/store/owed-checks.ts'
import { attachTransaction } from '../../src/store/trackings.ts'
import { useTestDatabase } from '../support/database.ts'
import { insertTestTracking, randomHash } from '../support/trackings.ts'

const database = useTestDatabase()

test("every pending tracking is stored with its check owed; a trace's to the follower at once, the others' once old", async () => {
  const db = database.db
  const account = await createAccount(db, 'owed checks')
  const trace = { blockchain: 'owed-chain', nonceless: true, sender: null, nonce: null, transaction: null, afterBlock: 41n }
  const first = await insertTestTracking(db, account.id, trace)
  const second = await insertTestTracking(db, account.id, { ...trace, afterBlock: 7n })
  const withNonce = await insertTestTracking(db, account.id, { blockchain: 'owed-chain', transaction: null })
  const named = await insertTestTracking(db, account.id, { ...trace, transaction: randomHash() })
  const read = async (limit: number) =>
    (await findOwedChecks(db, 'owed-chain', limit, 30_000)).map((o) => [o.trackingId, o.from, o.tracking?.id])

  assert.deepEqual(
    await read(10),
    [
      [first.id, 42n, first.id],
      [second.id, 8n, second.id],
    ],
    'the two traces, oldest first, read with their trackings; the young others are left to the node that stored them',
  )
  await sql`UPDATE owed_checks SET created_at = created_at - interval '1 minute' WHERE tracking_id = ${withNonce.id}`.execute(db)
  assert.deepEqual((await read(10))[0], [withNonce.id, 101n, withNonce.id], 'once old, the others too')
  assert.equal((await read(2)).length, 2, 'at most the limit')

  // A tracking that completed meanwhile has nothing left to check.
  await completeTracking(db, second.id, { status: 'failed', failedReason: 'TRACKING_TIMED_OUT' }, new Date())
  assert.equal((await findOwedChecks(db, 'owed-chain', 10, 0)).find((o) => o.trackingId === second.id)?.tracking, undefined)
  await settleOwedChecks(db, [second.id, withNonce.id, named.id])
  assert.deepEqual(await read(10), [[first.id, 42n, first.id]])
})

test('a search moved on, or a trace given its transaction, is not settled by the search that started before', async () => {
  const db = database.db
  const account = await createAccount(db, 'moved searches')
  const trace = await insertTestTracking(db, account.id, {
    blockchain: 'moved-chain',
    nonceless: true,
    sender: null,
    nonce: null,
    transaction: null,
    afterBlock: 99n,
  })
  assert.equal(await findOwedSearchStart(db, trace.id), 100n)
  await oweSearchFrom(db, trace.id, 'moved-chain', 164n)
  await settleOwedSearch(db, trace.id, 100n)
  assert.equal(await findOwedSearchStart(db, trace.id), 164n, 'the rest stays owed')
  await settleOwedSearch(db, trace.id, 164n)
  assert.equal(await findOwedSearchStart(db, trace.id), undefined)

  // Owed again after a dropped match (trace-catch-up.ts stopped short): stored anew.
  await oweSearchFrom(db, trace.id, 'moved-chain', 500n)
  assert.equal(await findOwedSearchStart(db, trace.id), 500n)

  // Given its transaction while its search runs: the search's end leaves the check by the transaction owed.
  assert.ok(await attachTransaction(db, trace.id, randomHash(), new Date()))
  await settleOwedSearch(db, trace.id, 500n)
  assert.equal(await findOwedSearchStart(db, trace.id), 500n, 'owed to the check by the transaction')
  await settleOwedChecks(db, [trace.id])
  assert.equal(await findOwedSearchStart(db, trace.id), undefined)
})
