// The embedded database's planner statistics (src/store/infrastructure/embedded-statistics.ts): PGlite runs no
// autovacuum, so the service analyzes a table once enough of it changed, as autovacuum would. Without that, a
// block's verdicts (ten rows by primary key) were planned as a scan of every pending tracking.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import pino from 'pino'
import { sql } from 'kysely'
import { createAccount } from '../../src/store/accounts.ts'
import { createEmbeddedStatistics } from '../../src/store/infrastructure/embedded-statistics.ts'
import { insertTrackings } from '../../src/store/trackings.ts'
import { testDatabaseUrl, useTestDatabase } from '../support/database.ts'
import { insertTestTracking, testTracking } from '../support/trackings.ts'

const embeddedOnly = { skip: testDatabaseUrl ? 'the embedded database only (PostgreSQL has autovacuum)' : false }

const database = useTestDatabase()

/** The plan of ten pending trackings' status change by id, as the verdicts' write makes it. */
async function planOfVerdictWrite(ids: string[]): Promise<string> {
  const values = sql.join(ids.map((id) => sql`(${id}::text)`))
  const { rows } = await sql<{ 'QUERY PLAN': string }>`
    EXPLAIN UPDATE trackings AS t SET status = 'success' FROM (VALUES ${values}) AS v(id)
    WHERE t.id = v.id AND t.status = 'pending'`.execute(database.db)
  return rows.map((row) => row['QUERY PLAN']).join('\n')
}

test('tables that changed enough are analyzed, once; then a verdict write finds its rows by primary key', embeddedOnly, async () => {
  const statistics = createEmbeddedStatistics({ db: database.db, logger: pino({ level: 'silent' }) })
  await statistics.check() // what the migrations wrote
  const account = await createAccount(database.db, 'statistics')
  const ids: string[] = []
  for (let i = 0; i < 1_000; i++) ids.push((await insertTestTracking(database.db, account.id))!.id)
  const before = await planOfVerdictWrite(ids.slice(0, 10))
  assert.doesNotMatch(before, /trackings_pkey/, `without statistics, not by primary key:\n${before}`)

  const analyzed = await statistics.check()
  assert.ok(analyzed.includes('trackings'), 'a thousand new rows: analyzed')
  assert.ok(analyzed.includes('accounts'), 'one row, below the threshold, but no statistics at all: analyzed')
  assert.deepEqual(await statistics.check(), [], 'nothing changed since: nothing analyzed')
  // Rows written just before a check count in it: this connection's counts reach the statistics at most once a
  // second unless flushed, and counts arriving after an analysis would call for another one.
  const burst = await insertTrackings(
    database.db,
    Array.from({ length: 300 }, () => testTracking(account.id, { callback: 'https://merchant.example/callback' })),
  )
  assert.equal(burst.filter(Boolean).length, 300)
  assert.ok((await statistics.check()).includes('trackings'), '300 rows written a moment ago: analyzed now')
  assert.deepEqual(await statistics.check(), [], 'and not once more')
  const after = await planOfVerdictWrite(ids.slice(0, 10))
  assert.match(after, /trackings_pkey/, `with statistics, by primary key:\n${after}`)
  // An account's trackings for an endpoint few of them call are found through their stored callback origin
  // (migration 0038), whose statistics cost no function call.
  const { rows: byOrigin } = await sql<{ 'QUERY PLAN': string }>`
    EXPLAIN SELECT 1 FROM trackings WHERE account_id = ${account.id} AND callback_origin = 'https://elsewhere.example' LIMIT 1`.execute(
    database.db,
  )
  assert.match(byOrigin.map((row) => row['QUERY PLAN']).join('\n'), /trackings_account_endpoint/)
  // A light analysis (a target of 10): at PostgreSQL's default of 100, a thousand rows make a histogram of 101 bounds.
  const { rows: histogram } = await sql<{ bounds: number }>`
    SELECT cardinality(histogram_bounds::text::text[]) AS bounds FROM pg_stats
    WHERE tablename = 'trackings' AND attname = 'created_at'`.execute(database.db)
  assert.equal(histogram.length, 1, 'created_at has a histogram')
  assert.ok(histogram[0]!.bounds <= 11, `${histogram[0]!.bounds} bounds`)
  const { rows: setting } = await sql<{ default_statistics_target: string }>`SHOW default_statistics_target`.execute(database.db)
  assert.equal(setting[0]!.default_statistics_target, '100', 'the target is the default again for everything else')

  await insertTestTracking(database.db, account.id)
  assert.deepEqual(await statistics.check(), [], 'one row in 1,300 is below the threshold (50 + 10%)')
})

test('start analyzes at once what changed enough; stop ends the checks', embeddedOnly, async () => {
  const statistics = createEmbeddedStatistics({ db: database.db, logger: pino({ level: 'silent' }) })
  const account = await createAccount(database.db, 'statistics at start')
  await insertTrackings(
    database.db,
    Array.from({ length: 500 }, () => testTracking(account.id)),
  )
  await statistics.start()
  await statistics.stop()
  assert.deepEqual(await statistics.check(), [], 'the 500 rows were analyzed by start')
})

test('a due check waits for the chain engine’s quiet moment; a stop does not', embeddedOnly, async () => {
  let asked!: () => void
  let quiet!: () => void
  let askedNow = new Promise<void>((resolve) => (asked = resolve))
  const quietMoment = () => {
    asked()
    return new Promise<void>((resolve) => (quiet = resolve))
  }
  const statistics = createEmbeddedStatistics({ db: database.db, logger: pino({ level: 'silent' }), quietMoment, checkEveryMs: 1 })
  await statistics.start()
  const account = await createAccount(database.db, 'statistics at a quiet moment')
  await insertTrackings(
    database.db,
    Array.from({ length: 500 }, () => testTracking(account.id)),
  )
  const changedSinceAnalysis = async () => {
    await sql`SELECT pg_stat_force_next_flush()`.execute(database.db)
    const { rows } = await sql<{ n: number }>`
      SELECT n_mod_since_analyze::int AS n FROM pg_stat_user_tables WHERE relname = 'trackings'`.execute(database.db)
    return rows[0]!.n
  }
  await askedNow
  assert.ok((await changedSinceAnalysis()) >= 500, 'the check waits: the new rows are not analyzed yet')
  askedNow = new Promise<void>((resolve) => (asked = resolve))
  quiet()
  await askedNow // the check ran, and the next one waits for the next quiet moment
  assert.equal(await changedSinceAnalysis(), 0, 'analyzed at the quiet moment')
  await statistics.stop() // while a check waits for a quiet moment that does not come
})
