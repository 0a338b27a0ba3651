import type { PGlite } from '@electric-sql/pglite'
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely'

const INT8 = 20

/**
 * Presents one embedded PGlite database to Kysely's PostgresDialect as a pool with a single
 * connection. PGlite serves one session, so a connection is handed out only after the previous one
 * was released: a transaction holds it to the end, and everything else waits its turn.
 */
export function createPGlitePool(pglite: PGlite): PostgresPool {
  let queue: Promise<void> = Promise.resolve()

  const client: PostgresPoolClient & { onRelease?: () => void } = {
    async query<R>(sql: string | object, parameters?: readonly unknown[]): Promise<PostgresQueryResult<R>> {
      if (typeof sql !== 'string') throw new Error('PGlite pool: cursors are not supported')
      // int8 as string, as node-postgres returns it, so both stores read identically.
      const options = { parsers: { [INT8]: (value: string) => value } }
      // Without parameters the simple protocol runs several statements at once (migrations).
      const result =
        parameters && parameters.length > 0
          ? await pglite.query<R>(sql, parameters as unknown[], options)
          : ((await pglite.exec(sql, options)).at(-1) ?? { rows: [], affectedRows: 0 })
      const command = (sql.trimStart().split(/\s/, 1)[0] ?? '').toUpperCase() as PostgresQueryResult<R>['command']
      return { command, rowCount: result.affectedRows ?? result.rows.length, rows: result.rows as R[] }
    },
    release() {
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
