// Prepared statements on PostgreSQL (src/store/infrastructure/prepared-pool.ts): hot statements are named on the
// connection, varying ones are not, and a schema change under a prepared `SELECT *` is survived.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { CompiledQuery, Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { openDatabase, type DatabaseHandle } from '../../src/store/infrastructure/database.ts'
import { createPreparedPool } from '../../src/store/infrastructure/prepared-pool.ts'
import { createFreshDatabaseUrl, dropDatabase, onPostgres, testDatabaseUrl } from '../support/database.ts'

/** Texts of the statements prepared on the connection that runs this query. */
async function preparedOnConnection(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements`.execute(db)
  return rows.map((r) => r.statement)
}

/**
 * Runs `select` until it is prepared, changes the schema under it with `alter`, and checks that the outdated
 * statement fails the transaction it runs in; answers the rows of the next transaction, which prepares afresh.
 */
async function outdatedInTransaction(
  db: Kysely<any>,
  select: (db: Kysely<any>) => Promise<{ rows: Record<string, unknown>[] }>,
  alter: string,
): Promise<Record<string, unknown>[]> {
  for (let i = 0; i < 4; i++) await select(db)
  await sql.raw(alter).execute(db)
  await assert.rejects(
    db.transaction().execute((trx) => select(trx)),
    /cached plan must not change result type/,
  )
  return db.transaction().execute(async (trx) => (await select(trx)).rows)
}

describe('prepared statements (PostgreSQL)', onPostgres, () => {
  let url: string
  let handle: DatabaseHandle
  before(async () => {
    url = (await createFreshDatabaseUrl())!
    // One connection: what one query prepared, the next one sees.
    handle = await openDatabase({ databaseUrl: url, dataDir: 'memory://', poolSize: 1 })
    await sql`CREATE TABLE prep_items (a int NOT NULL)`.execute(handle.db)
    await sql`INSERT INTO prep_items (a) VALUES (1), (2)`.execute(handle.db)
  })
  after(async () => {
    await handle?.close()
    if (url) await dropDatabase(url)
  })

  test('a statement run often is prepared on the connection; its results stay the same', async () => {
    const select = (min: number) =>
      handle.db
        .selectFrom('prep_items' as never)
        .selectAll()
        .where('a' as never, '>=', min as never)
        .execute()
    assert.deepEqual(await select(2), [{ a: 2 }])
    assert.equal(
      (await preparedOnConnection(handle.db)).some((s) => s.includes('prep_items')),
      false,
    )
    for (let i = 0; i < 3; i++) assert.deepEqual(await select(1), [{ a: 1 }, { a: 2 }])
    assert.equal(
      (await preparedOnConnection(handle.db)).some((s) => s.includes('prep_items')),
      true,
    )
    assert.deepEqual(await select(2), [{ a: 2 }])
  })

  test('a column added under a prepared SELECT *: the query is answered with the new column', async () => {
    const selectAll = () => sql<Record<string, unknown>>`SELECT * FROM prep_items WHERE a = ${1}`.execute(handle.db)
    for (let i = 0; i < 4; i++) await selectAll()
    await sql`ALTER TABLE prep_items ADD COLUMN b int NOT NULL DEFAULT 7`.execute(handle.db)
    assert.deepEqual((await selectAll()).rows, [{ a: 1, b: 7 }])
    // The connection holding the outdated statement was closed; its successor prepares afresh.
    for (let i = 0; i < 4; i++) assert.deepEqual((await selectAll()).rows, [{ a: 1, b: 7 }])
  })

  test('inside a transaction the outdated statement fails the transaction; the next one succeeds', async () => {
    const selectAll = (db: Kysely<any>) => sql<Record<string, unknown>>`SELECT * FROM prep_items WHERE a = ${2}`.execute(db)
    const rows = await outdatedInTransaction(handle.db, selectAll, 'ALTER TABLE prep_items ADD COLUMN c int NOT NULL DEFAULT 8')
    assert.deepEqual(rows, [{ a: 2, b: 7, c: 8 }])
  })

  test('a prepared statement the connection lost is run unnamed and the connection replaced', async () => {
    const select = () => sql<{ a: number }>`SELECT a FROM prep_items WHERE a <= ${1}`.execute(handle.db)
    for (let i = 0; i < 3; i++) await select()
    const { rows } = await sql<{
      name: string
    }>`SELECT name FROM pg_prepared_statements WHERE statement LIKE ${'SELECT a FROM prep_items%'}`.execute(handle.db)
    assert.equal(rows.length, 1)
    await sql.raw(`DEALLOCATE ${rows[0]!.name}`).execute(handle.db)
    assert.deepEqual((await select()).rows, [{ a: 1 }])
    assert.deepEqual((await select()).rows, [{ a: 1 }])
  })

  test('statement texts beyond the limit stay unnamed', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 1 })
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: createPreparedPool(pool, { preparedAfter: 1, maxPrepared: 2 }) }) })
    try {
      // A long text (a batch written as a list of values) is never prepared, however often it runs.
      const long = `SELECT 0 AS long_text ${' '.repeat(5000)} FROM prep_items WHERE a = $1`
      for (let i = 0; i < 3; i++) await db.executeQuery(CompiledQuery.raw(long, [1]))
      for (let n = 1; n <= 5; n++) await sql`SELECT ${sql.raw(String(n))} AS n FROM prep_items WHERE a = ${1}`.execute(db)
      const prepared = await preparedOnConnection(db)
      assert.deepEqual(prepared.filter((s) => s.includes('AS n')).length, 2)
      assert.equal(
        prepared.some((s) => s.includes('long_text')),
        false,
      )
      assert.equal(prepared.length, 2, 'the pg_prepared_statements query itself is beyond the limit too')
    } finally {
      await db.destroy()
    }
  })

  test('PAYWATCH_PREPARED_STATEMENTS=false: nothing is prepared', async () => {
    const plain = await openDatabase({ databaseUrl: url, dataDir: 'memory://', poolSize: 1, preparedStatements: false })
    try {
      for (let i = 0; i < 5; i++)
        await plain.db
          .selectFrom('prep_items' as never)
          .selectAll()
          .execute()
      assert.deepEqual(await preparedOnConnection(plain.db), [])
    } finally {
      await plain.close()
    }
  })
})

// The same on the embedded database (src/store/infrastructure/pglite-prepared.ts): PGlite's own `query` has no
// named statements, so the pool prepares them over PGlite's wire protocol.
describe('prepared statements (embedded database)', { skip: testDatabaseUrl ? 'the embedded database only' : false }, () => {
  let handle: DatabaseHandle
  before(async () => {
    handle = await openDatabase({ databaseUrl: null, dataDir: 'memory://' })
    await sql`CREATE TABLE prep_embedded (a int NOT NULL, at timestamptz, big int8, tags text[], doc jsonb)`.execute(handle.db)
  })
  after(async () => handle?.close())

  test('a statement run often is prepared; every kind of value goes in and comes out as before', async () => {
    const at = new Date('2026-11-27T04:00:00.000Z')
    const insert = (a: number) =>
      sql<
        Record<string, unknown>
      >`INSERT INTO prep_embedded (a, at, big, tags, doc) VALUES (${a}, ${at}, ${'9007199254740993'}, ${['x', 'y,z']}, ${JSON.stringify({ n: a })})
          RETURNING *`.execute(handle.db)
    const rows: Record<string, unknown>[] = []
    for (let a = 1; a <= 4; a++) rows.push(...(await insert(a)).rows)
    assert.ok(
      (await preparedOnConnection(handle.db)).some((s) => s.startsWith('INSERT INTO prep_embedded')),
      'prepared',
    )
    // The first two runs unnamed, the next ones prepared: the same values in, the same shapes out.
    assert.deepEqual(
      rows,
      [1, 2, 3, 4].map((a) => ({ a, at, big: '9007199254740993', tags: ['x', 'y,z'], doc: { n: a } })),
    )
    const nulls = sql`SELECT count(*)::int AS n FROM prep_embedded WHERE at IS NOT DISTINCT FROM ${null}::timestamptz`
    for (let i = 0; i < 4; i++) assert.deepEqual((await nulls.execute(handle.db)).rows, [{ n: 0 }])
  })

  test('a column added under a prepared SELECT *: answered with the new column, in a transaction the next time', async () => {
    const selectAll = (db: Kysely<any>) => sql<Record<string, unknown>>`SELECT a, e.* FROM prep_embedded e WHERE a = ${1}`.execute(db)
    for (let i = 0; i < 4; i++) await selectAll(handle.db)
    await sql`ALTER TABLE prep_embedded ADD COLUMN b int NOT NULL DEFAULT 7`.execute(handle.db)
    assert.equal((await selectAll(handle.db)).rows[0]!.b, 7, 'outside a transaction: run again unnamed')
    const rows = await outdatedInTransaction(handle.db, selectAll, 'ALTER TABLE prep_embedded ADD COLUMN c int NOT NULL DEFAULT 8')
    assert.equal(rows[0]!.c, 8, 'the next transaction prepares afresh')
  })

  test('PAYWATCH_PREPARED_STATEMENTS=false: nothing is prepared', async () => {
    const plain = await openDatabase({ databaseUrl: null, dataDir: 'memory://', preparedStatements: false })
    try {
      for (let i = 0; i < 5; i++) await sql`SELECT ${i}::int AS i`.execute(plain.db)
      assert.deepEqual(await preparedOnConnection(plain.db), [])
    } finally {
      await plain.close()
    }
  })
})
