// The searches owed to traces (trace-searches.ts, migration 0039): a trace is stored with the search of the
// blocks after its `after_block`, a tracking with a nonce or a transaction is not; a search that stopped short
// moves its start on and is not settled by the run that started it from the earlier block.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createAccount } from '../../src/store/accounts.ts'
import { completeTracking } from '../../src/store/complete-tracking.ts'
import { findOwedTraceSearch, findOwedTraceSearches, oweTraceSearch, settleTraceSearch } from '../../src/store/trace-searches.ts'
import { useTestDatabase } from '../support/database.ts'
import { insertTestTracking, randomHash } from '../support/trackings.ts'

const database = useTestDatabase()

test('a trace is stored with its search owed from the block after its after_block; other trackings are not', async () => {
  const db = database.db
  const account = await createAccount(db, 'owed searches')
  const trace = { blockchain: 'owed-chain', nonceless: true, sender: null, nonce: null, transaction: null, afterBlock: 41n }
  const first = await insertTestTracking(db, account.id, trace)
  const second = await insertTestTracking(db, account.id, { ...trace, afterBlock: 7n })
  await insertTestTracking(db, account.id, { blockchain: 'owed-chain', transaction: null })
  await insertTestTracking(db, account.id, { ...trace, transaction: randomHash() })

  const owed = await findOwedTraceSearches(db, 'owed-chain', 10)
  assert.deepEqual(
    owed.map((o) => [o.trackingId, o.from, o.tracking?.id]),
    [
      [first.id, 42n, first.id],
      [second.id, 8n, second.id],
    ],
    'the two traces, oldest first, read with their trackings',
  )
  assert.deepEqual(await findOwedTraceSearches(db, 'owed-chain', 1).then((o) => o.length), 1, 'at most the limit')

  // A trace that completed meanwhile has nothing left to search for.
  await completeTracking(db, second.id, { status: 'failed', failedReason: 'TRACKING_TIMED_OUT' }, new Date())
  assert.equal((await findOwedTraceSearches(db, 'owed-chain', 10)).find((o) => o.trackingId === second.id)?.tracking, undefined)
  await settleTraceSearch(db, second.id)
  assert.equal(await findOwedTraceSearch(db, second.id), undefined)
})

test('a search moved on is not settled by the run that started it; the run of the rest settles it', async () => {
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
  assert.equal(await findOwedTraceSearch(db, trace.id), 100n)
  await oweTraceSearch(db, trace.id, 'moved-chain', 164n)
  await settleTraceSearch(db, trace.id, 100n)
  assert.equal(await findOwedTraceSearch(db, trace.id), 164n, 'the rest stays owed')
  await settleTraceSearch(db, trace.id, 164n)
  assert.equal(await findOwedTraceSearch(db, trace.id), undefined)

  // Owed again after a dropped match (trace-catch-up.ts stopped short): stored anew.
  await oweTraceSearch(db, trace.id, 'moved-chain', 500n)
  assert.equal(await findOwedTraceSearch(db, trace.id), 500n)
})
