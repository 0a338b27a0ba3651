import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { Kysely, PostgresDialect, type KyselyConfig } from 'kysely'
import pg from 'pg'
import { PGlite } from '@electric-sql/pglite'
import { lockDataDir, type DataDirLock } from './data-dir-lock.ts'
import { prepareDataDir, restrictToOwner } from './data-dir-permissions.ts'
import { createPGlitePool } from './pglite-pool.ts'
import { createPreparedPool } from './prepared-pool.ts'
import type { Database } from '../schema.ts'

export type Db = Kysely<Database>

export interface DatabaseHandle {
  db: Db
  kind: 'postgres' | 'pglite'
  /** The PostgreSQL URL when `kind` is postgres: LISTEN/NOTIFY and advisory locks need their own connections. */
  url: string | null
  close(): Promise<void>
}

export interface DatabaseOptions {
  databaseUrl: string | null
  /** Folder of the embedded database; `memory://` keeps it in memory (tests). */
  dataDir: string
  poolSize?: number
  /** Prepare the statements run often, on PostgreSQL and on the embedded database alike (default true). */
  preparedStatements?: boolean
  /** Embedded database: start from an empty one, deleting what the folder held (`paywatch dev`). */
  fresh?: boolean
  /** Sees the SQL of every query (tests count them). */
  onQuery?: (sql: string) => void
  /**
   * Embedded only: PostgreSQL's shared_buffers in MB (default 16). PGlite keeps them in its
   * WebAssembly memory, which never shrinks: its own default (128 MB) is most of the embedded
   * service's RSS beyond the compiled engine.
   */
  embeddedSharedBuffersMb?: number
}

/**
 * One PostgreSQL connection of its own (not shared with the pool's queries), reconnected on the next
 * query when lost: chain leases mark their holder alive by this connection's backend. Its statements
 * never wait long, so a stuck lock or a dead network ends in an error instead of a hang.
 */
export function openDedicatedConnection(url: string, applicationName: string): Db {
  const pool = new pg.Pool({
    connectionString: url,
    max: 1,
    idleTimeoutMillis: 0,
    keepAlive: true,
    application_name: applicationName,
    connectionTimeoutMillis: 5_000,
    query_timeout: 5_000,
    statement_timeout: 4_000,
    lock_timeout: 2_000,
  })
  pool.on('error', () => {})
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
}

/** Opens PostgreSQL when a URL is configured, else the embedded PGlite database in the data folder. */
export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolSize ?? 20 })
    // An idle client losing its connection must not crash the process; the pool replaces it.
    pool.on('error', () => {})
    const dialectPool = options.preparedStatements === false ? pool : createPreparedPool(pool)
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: dialectPool }), log: queryLog(options) })
    return { db, kind: 'postgres', url: options.databaseUrl, close: () => db.destroy() }
  }
  let dataPath = options.dataDir
  let lock: DataDirLock | undefined
  if (!dataPath.startsWith('memory://')) {
    // Owner-only (0700), created so or refused otherwise (src/store/data-dir-permissions.ts).
    prepareDataDir(options.dataDir)
    // Before PGlite touches the folder: a second process on it stops here (DataDirLockedError).
    lock = lockDataDir(options.dataDir)
    dataPath = join(options.dataDir, 'pglite')
    if (options.fresh) rmSync(dataPath, { recursive: true, force: true })
  }
  let pglite: PGlite
  try {
    pglite = await PGlite.create(dataPath, {
      postgresqlconf: [`shared_buffers = ${options.embeddedSharedBuffersMb ?? 16}MB`],
    })
  } catch (error) {
    lock?.release()
    throw error
  }
  // PGlite has written its cluster (files 0666): each file its owner's only, as PostgreSQL keeps them.
  if (lock) restrictToOwner(dataPath)
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: createPGlitePool(pglite, { preparedStatements: options.preparedStatements }) }),
    log: queryLog(options),
  })
  return {
    db,
    kind: 'pglite',
    url: null,
    close: async () => {
      try {
        await db.destroy()
      } finally {
        lock?.release()
      }
    },
  }
}

const queryLog = (options: DatabaseOptions): KyselyConfig['log'] =>
  options.onQuery ? (event) => options.onQuery!(event.query.sql) : undefined
