import { sql } from 'kysely'
import type { Logger } from 'pino'
import type { Db } from './database.ts'

/** autovacuum's defaults: a table is analyzed once this many rows plus this share of its rows changed since the last time. */
const ANALYZE_THRESHOLD = 50
const ANALYZE_SCALE_FACTOR = 0.1
/** As autovacuum's naptime: a burst of writes is analyzed at most once a minute. */
const CHECK_EVERY_MS = 60_000

export interface EmbeddedStatistics {
  /** Analyzes the tables that changed enough since their last analysis; answers their names. */
  check(): Promise<string[]>
  /** Checks now, then every minute, until `stop`. */
  start(): Promise<void>
  stop(): Promise<void>
}

/**
 * The embedded database's planner statistics. PGlite runs PostgreSQL as one backend without its background
 * processes, so autovacuum never analyzes a table, and the planner guesses: with none, it judged a block's
 * verdicts (ten rows by primary key) by scanning every pending tracking, 25 ms against 3 ms once analyzed
 * (docs/performance.md, "Planner statistics on the embedded database"). This applies autovacuum's rule to the
 * cumulative statistics PGlite does keep, and analyzes a table with rows and no statistics at all (a folder an
 * earlier version wrote): at start, then once a minute. An analysis samples at most 30,000
 * rows of a table, so its cost is bounded; it runs on the database's one connection like any statement.
 */
export function createEmbeddedStatistics(deps: { db: Db; logger: Logger; everyMs?: number }): EmbeddedStatistics {
  let timer: NodeJS.Timeout | undefined
  let running: Promise<unknown> = Promise.resolve()

  async function check(): Promise<string[]> {
    const { rows } = await sql<{ name: string }>`
      SELECT s.relname AS name FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
      WHERE s.n_mod_since_analyze > ${ANALYZE_THRESHOLD} + ${ANALYZE_SCALE_FACTOR} * greatest(c.reltuples, 0)
        -- Rows and no statistics at all: a folder written by an earlier version, or counts lost in a crash.
        OR (pg_relation_size(c.oid) > 0 AND NOT EXISTS (SELECT 1 FROM pg_statistic p WHERE p.starelid = c.oid))
      ORDER BY s.relname`.execute(deps.db)
    for (const { name } of rows) await sql`ANALYZE ${sql.id(name)}`.execute(deps.db)
    if (rows.length > 0) deps.logger.debug({ tables: rows.map((row) => row.name) }, 'embedded database analyzed')
    return rows.map((row) => row.name)
  }

  const tick = () => {
    running = check().catch((error: unknown) => deps.logger.warn({ err: error }, 'analyzing the embedded database failed'))
  }

  return {
    check,
    async start() {
      await check()
      timer = setInterval(tick, deps.everyMs ?? CHECK_EVERY_MS)
      timer.unref()
    },
    async stop() {
      clearInterval(timer)
      await running
    },
  }
}
