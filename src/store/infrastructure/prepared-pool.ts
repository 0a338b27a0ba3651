import type pg from 'pg'
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely'

export interface PreparedPoolOptions {
  /** A statement text becomes a named prepared statement once it was run this often on the pool. */
  preparedAfter?: number
  /** At most this many statement texts are prepared (on each connection): texts that vary stay unnamed. */
  maxPrepared?: number
}

// Longer texts are built from lists of values (batch writes) and rarely repeat: not worth keeping.
const MAX_PREPARED_LENGTH = 4096
// Texts counted towards `preparedAfter` at most; the count starts over when it is reached.
const MAX_COUNTED = 1000

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
  const preparedAfter = options.preparedAfter ?? 3
  const maxPrepared = options.maxPrepared ?? 500
  const seen = new Map<string, number>()
  const names = new Map<string, string>()
  const clients = new WeakMap<pg.PoolClient, PostgresPoolClient>()

  function nameOf(text: string): string | undefined {
    const name = names.get(text)
    if (name !== undefined || names.size >= maxPrepared || text.length > MAX_PREPARED_LENGTH) return name
    const runs = (seen.get(text) ?? 0) + 1
    if (runs < preparedAfter) {
      // Texts that keep varying must not grow the count forever; a hot one is soon counted again.
      if (seen.size >= MAX_COUNTED) seen.clear()
      seen.set(text, runs)
      return undefined
    }
    seen.delete(text)
    const assigned = `pw_${names.size + 1}`
    names.set(text, assigned)
    return assigned
  }

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

/** true for a statement that opens a transaction, false for one that ends it, else undefined. */
function transactionControl(sql: string): boolean | undefined {
  const head = sql.trimStart().slice(0, 17).toLowerCase()
  if (head.startsWith('begin') || head.startsWith('start transaction')) return true
  if (head.startsWith('commit') || (head.startsWith('rollback') && !head.startsWith('rollback to'))) return false
  return undefined
}

/** The prepared statement is outdated by a schema change, or no longer exists on the connection. */
function isUnusableStatement(error: unknown): boolean {
  const code = (error as { code?: string }).code
  return (code === '0A000' && /cached plan must not change result type/.test((error as Error).message)) || code === '26000'
}
