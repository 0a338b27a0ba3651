import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { sql } from 'kysely'
import type { Db } from './database.ts'

const migrationsDir = fileURLToPath(new URL('../migrations/', import.meta.url))
/** Any fixed number: serializes migrations when several nodes start against one database. */
const MIGRATION_LOCK = 7_346_001

export interface Migration {
  version: number
  name: string
  sql: string
}

/** Numbered SQL files `NNNN_name.sql`, in order. */
export function listMigrations(): Migration[] {
  return readdirSync(migrationsDir)
    .filter((file) => /^\d{4}_[\w-]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 4)),
      name: file.slice(5, -4),
      sql: readFileSync(migrationsDir + file, 'utf8'),
    }))
}

/**
 * Applies the migrations not applied yet, each in its own transaction; returns their names. `through`: only
 * those up to that version (a test of what a later migration does to rows stored before it).
 */
export async function migrate(db: Db, options: { through?: number } = {}): Promise<string[]> {
  return db.connection().execute(async (conn) => {
    await sql`SELECT pg_advisory_lock(${MIGRATION_LOCK})`.execute(conn)
    try {
      await sql`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`.execute(conn)
      const done = await sql<{ version: number }>`SELECT version FROM schema_migrations`.execute(conn)
      const applied = new Set(done.rows.map((row) => Number(row.version)))
      const names: string[] = []
      for (const migration of listMigrations()) {
        if (applied.has(migration.version)) continue
        if (options.through !== undefined && migration.version > options.through) break
        await conn.transaction().execute(async (trx) => {
          await sql.raw(migration.sql).execute(trx)
          await sql`INSERT INTO schema_migrations (version, name) VALUES (${migration.version}, ${migration.name})`.execute(trx)
        })
        names.push(`${String(migration.version).padStart(4, '0')}_${migration.name}`)
      }
      return names
    } finally {
      await sql`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`.execute(conn)
    }
  })
}
