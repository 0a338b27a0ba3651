// The payments API's batched statements, on whichever store the suite runs against (PGlite by default,
// PostgreSQL with DATABASE_URL): concurrent creates and reads share statements, each still gets its own outcome.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely'
import type { Tracking } from '../../src/domain/tracking.ts'
import { createAccount } from '../../src/store/accounts.ts'
import type { Db } from '../../src/store/infrastructure/database.ts'
import { createTrackingBatches } from '../../src/store/tracking-batches.ts'
import { findTrackingBySecret, insertTrackings } from '../../src/store/trackings.ts'
import { useTestDatabase } from '../support/database.ts'
import { randomAddress, testTracking } from '../support/trackings.ts'

/** Counts the statements that succeeded through a Kysely instance (a failed one has no result). */
class StatementCounter implements KyselyPlugin {
  count = 0
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    this.count++
    return args.result
  }
}

describe('batched tracking statements', () => {
  let accountId: string
  const database = useTestDatabase(async (db) => {
    accountId = (await createAccount(db, 'batches')).id
  })

  const counted = (): { db: Db; counter: StatementCounter } => {
    const counter = new StatementCounter()
    return { db: database.db.withPlugin(counter), counter }
  }

  test('creates arriving together are stored by one statement, each answered with its own tracking', async () => {
    const { db, counter } = counted()
    const batches = createTrackingBatches(db)
    const trackings = Array.from({ length: 25 }, (_, i) => testTracking(accountId, { payload: { order: i, b: 1, a: 2 } }))
    const stored = await Promise.all(trackings.map((t) => batches.insert(t)))
    assert.equal(counter.count, 1)
    for (const [i, t] of trackings.entries()) {
      // The payload as jsonb stores it (keys reordered), as every later read shows it.
      const read = await findTrackingBySecret(database.db, accountId, t.secretId)
      assert.deepEqual(stored[i], read)
      assert.deepEqual(Object.keys(stored[i]!.payload!), Object.keys(read!.payload!))
      assert.equal(stored[i]!.id, t.id)
    }
  })

  test('a lone create is one single-row statement; creates arriving while a statement runs go into the next', async () => {
    const { db, counter } = counted()
    const batches = createTrackingBatches(db)
    const first = batches.insert(testTracking(accountId))
    await new Promise((resolve) => setImmediate(resolve)) // the first statement is on its way
    const more = Array.from({ length: 5 }, () => batches.insert(testTracking(accountId)))
    assert.ok(await first)
    for (const stored of await Promise.all(more)) assert.ok(stored)
    assert.equal(counter.count, 2)
  })

  test('a repeat inside one batch: the first row is stored, the repeat answers undefined (an existing tracking)', async () => {
    const batches = createTrackingBatches(database.db)
    // Rows are inserted in identity order (accounts, chain, sender, nonce); the first of a repeat wins.
    const original = testTracking(accountId, { sender: `0x00${randomAddress().slice(4)}` })
    const sameIdentity = testTracking(accountId, { sender: original.sender, nonce: original.nonce })
    const sameSecret = testTracking(accountId, { secretId: original.secretId, sender: `0xff${randomAddress().slice(4)}` })
    const other = testTracking(accountId)
    const [a, b, c, d] = await Promise.all([original, sameIdentity, sameSecret, other].map((t) => batches.insert(t)))
    assert.equal(a?.id, original.id)
    assert.equal(b, undefined)
    assert.equal(c, undefined)
    assert.equal(d?.id, other.id)
  })

  test('a row the database refuses fails only its own create: the batch is retried row by row', async () => {
    const { db, counter } = counted()
    const batches = createTrackingBatches(db)
    // integration_id references integrations: an unknown one violates the foreign key.
    const good = Array.from({ length: 4 }, () => testTracking(accountId))
    const bad = testTracking(accountId, { integrationId: 'no-such-integration' })
    const outcomes = await Promise.allSettled([good[0]!, good[1]!, bad, good[2]!, good[3]!].map((t) => batches.insert(t)))
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
    )
    for (const t of good) assert.equal((await findTrackingBySecret(database.db, accountId, t.secretId))?.id, t.id)
    assert.equal(await findTrackingBySecret(database.db, accountId, bad.secretId), undefined)
    // Statements that failed (the batch, the refused row) give no result to count: the four others were
    // stored one statement each, after the batch failed.
    assert.equal(counter.count, 4)
  })

  test('more rows than one statement can carry parameters for (65,535) are stored by several, each answered', async () => {
    const { db, counter } = counted()
    const trackings = Array.from({ length: 2_100 }, (_, i) => testTracking(accountId, { payload: { order: i } }))
    const [first] = trackings as [Tracking]
    const repeat = testTracking(accountId, { secretId: first.secretId, sender: first.sender, nonce: first.nonce })
    const stored = await insertTrackings(db, [...trackings, repeat])
    assert.equal(counter.count, 2, 'two statements')
    assert.deepEqual(
      stored.map((t) => t?.id),
      [...trackings.map((t) => t.id), undefined],
      'each in its place; a repeat of the first is refused',
    )
    assert.deepEqual(stored[2_099]?.payload, { order: 2_099 })
  })

  test('reads arriving together are one statement, each answered with its own tracking or undefined', async () => {
    const stored = await Promise.all(Array.from({ length: 6 }, () => createTrackingBatches(database.db).insert(testTracking(accountId))))
    const other = (await createAccount(database.db, 'someone else')).id
    const { db, counter } = counted()
    const reader = createTrackingBatches(db)
    const keys = [
      ...stored.map((t) => ({ accountId, secretId: t!.secretId })),
      { accountId, secretId: 'never-stored' },
      // Another account's secret is not found (reads are per account).
      { accountId: other, secretId: stored[0]!.secretId },
      // The same key twice in one batch: both answered.
      { accountId, secretId: stored[1]!.secretId },
    ]
    const found = await Promise.all(keys.map((k) => reader.findBySecret(k.accountId, k.secretId)))
    assert.equal(counter.count, 1)
    for (const [i, t] of stored.entries()) assert.deepEqual(found[i], await findTrackingBySecret(database.db, accountId, t!.secretId))
    assert.equal(found[6], undefined)
    assert.equal(found[7], undefined)
    assert.deepEqual(found[8], found[1])
  })
})
