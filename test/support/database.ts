import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before } from 'node:test'
import pg from 'pg'
import { loadConfig, type Config } from '../../src/config/config.ts'
import { openDatabase, type DatabaseHandle, type Db } from '../../src/store/infrastructure/database.ts'
import { migrate } from '../../src/store/infrastructure/migrate.ts'
import { seedEmbeddedDataDir } from './pglite-template.ts'

/** The PostgreSQL server under test (DATABASE_URL), or null for the embedded database. */
export const testDatabaseUrl: string | null = process.env.DATABASE_URL || null

/** Test options of a test that only means something on PostgreSQL: skipped on the embedded database. */
export const onPostgres = { skip: testDatabaseUrl ? false : 'needs DATABASE_URL (PostgreSQL)' }

/**
 * A fresh, migrated database for one test file: a new database on the PostgreSQL server named by
 * DATABASE_URL (dropped again by `close`), else an embedded PGlite in a temporary folder. `onQuery` is told
 * every statement's text (what a test asserts was, or was not, run); `migrateThrough` stops the migrations
 * after that version.
 */
export async function createTestDatabase(
  options: { onQuery?: (sql: string) => void; migrateThrough?: number } = {},
): Promise<DatabaseHandle & { url: string | null }> {
  const url = await createFreshDatabaseUrl()
  // Embedded: a temporary folder seeded with an initialised cluster (no initdb per test file).
  const dataDir = url ? 'memory://' : mkdtempSync(join(tmpdir(), 'paywatch-db-'))
  if (!url) await seedEmbeddedDataDir(dataDir)
  const handle = await openDatabase({ databaseUrl: url, dataDir, onQuery: options.onQuery })
  await migrate(handle.db, { through: options.migrateThrough })
  return {
    ...handle,
    url,
    async close() {
      await handle.close()
      if (url) await dropDatabase(url)
      else rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

export type TestDatabase = Awaited<ReturnType<typeof createTestDatabase>>

/**
 * The test file's database (`createTestDatabase`): opened before the file's tests, closed after them.
 * `setUp` runs once it is open (rows the file's tests share): a file's top-level `before` hooks start
 * together, so another hook cannot count on the database being open yet.
 */
export function useTestDatabase(setUp?: (db: Db) => Promise<void>): { readonly db: Db } {
  let handle: TestDatabase | undefined
  before(async () => {
    handle = await createTestDatabase()
    await setUp?.(handle.db)
  })
  after(async () => handle?.close())
  return {
    get db() {
      if (!handle) throw new Error('useTestDatabase: use the database inside a hook or a test')
      return handle.db
    },
  }
}

/** A new empty database on the test server; null when tests run on the embedded database. */
export async function createFreshDatabaseUrl(): Promise<string | null> {
  if (!testDatabaseUrl) return null
  const name = `pw_test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: testDatabaseUrl })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  const url = new URL(testDatabaseUrl)
  url.pathname = `/${name}`
  return url.toString()
}

export async function dropDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1)
  const admin = new pg.Client({ connectionString: testDatabaseUrl! })
  await admin.connect()
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  } finally {
    await admin.end()
  }
}

/**
 * The configuration of a test file's CLI commands: a fresh PostgreSQL database, or an initialised embedded
 * data folder (each command opens it without an initdb); both are removed after the file.
 */
export function useCommandConfig(prefix: string): { readonly config: Config } {
  let config: Config | undefined
  let databaseUrl: string | null = null
  before(async () => {
    databaseUrl = await createFreshDatabaseUrl()
    const dataDir = mkdtempSync(join(tmpdir(), prefix))
    if (!databaseUrl) await seedEmbeddedDataDir(dataDir)
    config = loadConfig({ PAYWATCH_DATA_DIR: dataDir, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) })
  })
  after(async () => {
    if (databaseUrl) await dropDatabase(databaseUrl)
    if (config) rmSync(config.dataDir, { recursive: true, force: true })
  })
  return {
    get config(): Config {
      if (!config) throw new Error('useCommandConfig: read the configuration inside a test')
      return config
    },
  }
}
