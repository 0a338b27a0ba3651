import type pg from 'pg'
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely'
import { createStatementNames, isUnusableStatement, transactionControl, type StatementNameOptions } from './statement-names.ts'

export type PreparedPoolOptions = StatementNameOptions

/**
 * Presents a `pg` pool to Kysely's PostgresDialect with the statements it runs often prepared on
 * each connection. Kysely sends every query as an unnamed statement, which PostgreSQL parses,
 * analyses and plans on every run; naming the hot ones saves that work (measured on the create
 * path: a fifth of PostgreSQL's CPU per insert).
 *
 * A schema change that alters what a prepared `SELECT *` or `RETURNING *` returns (a migration of a
 * newer node during a rolling deploy) makes PostgreSQL refuse the old statement with "cached plan
 * must not change result type". The statement is then run again unnamed when that is safe (outside a
 * transaction, whose first failure aborts it), and the connection is closed when released, taking its
 * outdated statements with it. The same holds for a statement the connection lost (node-postgres
 * closes a named statement when binding a value fails, yet still counts it as prepared).
 */
export function createPreparedPool(pool: pg.Pool, options: PreparedPoolOptions = {}): PostgresPool {
  const { nameOf } = createStatementNames(options)
  const clients = new WeakMap<pg.PoolClient, PostgresPoolClient>()

  function wrap(client: pg.PoolClient): PostgresPoolClient {
    let inTransaction = false
    let outdated = false
    const wrapped = {
      get processID() {
        return (client as unknown as { processID?: number }).processID
      },
      async query<R>(sql: string | object, parameters?: readonly unknown[]): Promise<PostgresQueryResult<R>> {
        if (typeof sql !== 'string') return client.query(sql as never) as never
        const control = transactionControl(sql)
        if (control !== undefined) {
          const result = await client.query(sql, parameters as unknown[])
          inTransaction = control
          return result as never
        }
        const name = outdated ? undefined : nameOf(sql)
        if (name === undefined) return client.query(sql, parameters as unknown[]) as never
        try {
          return (await client.query({ name, text: sql, values: parameters as unknown[] })) as never
        } catch (error) {
          if (!isUnusableStatement(error)) throw error
          outdated = true
          if (inTransaction) throw error
          return client.query(sql, parameters as unknown[]) as never
        }
      },
      release(destroy?: boolean | Error) {
        const discard = Boolean(destroy) || outdated
        inTransaction = false
        if (discard) clients.delete(client)
        client.release(discard)
      },
    }
    return wrapped as unknown as PostgresPoolClient
  }

  return {
    options: pool.options,
    async connect() {
      const client = await pool.connect()
      let wrapped = clients.get(client)
      if (!wrapped) {
        wrapped = wrap(client)
        clients.set(client, wrapped)
      }
      return wrapped
    },
    end: () => pool.end(),
  } as PostgresPool
}
