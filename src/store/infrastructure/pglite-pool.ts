import type { PGlite } from '@electric-sql/pglite'
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely'
import { createPGlitePrepared } from './pglite-prepared.ts'
import { createStatementNames, isUnusableStatement, transactionControl } from './statement-names.ts'

const INT8 = 20

/** int8 as string, as node-postgres returns it, so both stores read identically. */
const parsers = { [INT8]: (value: string) => value }

/**
 * Presents one embedded PGlite database to Kysely's PostgresDialect as a pool with a single
 * connection. PGlite serves one session, so a connection is handed out only after the previous one
 * was released: a transaction holds it to the end, and everything else waits its turn. With
 * `preparedStatements`, a parameterized text run often is a named prepared statement
 * (pglite-prepared.ts), as the PostgreSQL pool's are (prepared-pool.ts); one a schema change outdated is
 * run again unnamed outside a transaction, and every name is forgotten.
 */
export function createPGlitePool(pglite: PGlite, options: { preparedStatements?: boolean } = {}): PostgresPool {
  let queue: Promise<void> = Promise.resolve()
  const names = options.preparedStatements === false ? undefined : createStatementNames()
  const prepared = createPGlitePrepared(pglite)
  let inTransaction = false

  const withParameters = async (sql: string, parameters: readonly unknown[]) => {
    const name = names?.nameOf(sql)
    if (name === undefined) return pglite.query(sql, parameters as unknown[], { parsers })
    try {
      return await prepared.run(name, sql, parameters, parsers)
    } catch (error) {
      if (!isUnusableStatement(error)) throw error
      names!.clear()
      prepared.forget()
      if (inTransaction) throw error
      return pglite.query(sql, parameters as unknown[], { parsers })
    }
  }

  const client: PostgresPoolClient & { onRelease?: () => void } = {
    async query<R>(sql: string | object, parameters?: readonly unknown[]): Promise<PostgresQueryResult<R>> {
      if (typeof sql !== 'string') throw new Error('PGlite pool: cursors are not supported')
      const control = transactionControl(sql)
      // Without parameters the simple protocol runs several statements at once (migrations).
      const result =
        parameters && parameters.length > 0
          ? await withParameters(sql, parameters)
          : ((await pglite.exec(sql, { parsers })).at(-1) ?? { rows: [], affectedRows: 0 })
      if (control !== undefined) inTransaction = control
      const command = (sql.trimStart().split(/\s/, 1)[0] ?? '').toUpperCase() as PostgresQueryResult<R>['command']
      return { command, rowCount: result.affectedRows ?? result.rows.length, rows: result.rows as R[] }
    },
    release() {
      // A connection goes back when its transaction ended (or failed to).
      inTransaction = false
      client.onRelease?.()
    },
  } as PostgresPoolClient & { onRelease?: () => void }

  return {
    options: {},
    async connect() {
      const previous = queue
      let release!: () => void
      queue = new Promise<void>((resolve) => (release = resolve))
      await previous
      client.onRelease = release
      return client
    },
    async end() {
      await queue
      await pglite.close()
    },
  }
}
