import { sql } from 'kysely'
import type { Logger } from 'pino'
import type { Db } from './database.ts'

/** autovacuum's defaults: a table is analyzed once this many rows plus this share of its rows changed since the last time. */
const ANALYZE_THRESHOLD = 50
const ANALYZE_SCALE_FACTOR = 0.1
/**
 * How often the rule is checked (autovacuum's naptime is a minute). A plan kept for a statement run often
 * (pglite-prepared.ts) is made again only once an analysis changed the statistics it was made from: one made
 * while `trackings` was nearly empty scanned the whole table for the matched trackings of every block, 350–450
 * ms at 50,000–100,000 rows during a burst of creates, until the next analysis (docs/performance.md,
 * "A plan kept from an empty table"). A check where nothing changed enough is one read of the statistics, 3–4 ms.
 */
const CHECK_EVERY_MS = 10_000
/**
 * The statistics target of these analyses (PostgreSQL's default: 100). An analysis samples 300 rows per unit
 * of it and runs on the main thread: at 100, analyzing 100,000 trackings held it 610–910 ms; at 10 (3,000
 * rows sampled) 66–83 ms (docs/performance.md, "Lighter analyses"). The plans here are index choices by
 * equality and by partial index, which ten-entry lists and ten-bucket histograms decide as well.
 */
const EMBEDDED_STATISTICS_TARGET = 10

/**
 * A due check waits at most this long for a quiet moment of the chain engine (just after a block was processed):
 * the check and its analyses hold the main thread 3–50 ms, which a block's callbacks would otherwise wait behind
 * when they coincide (docs/performance.md, "Thirteenth pass").
 */
const QUIET_WAIT_MS = 15_000

export interface EmbeddedStatistics {
  /** Analyzes the tables that changed enough since their last analysis; answers their names. */
  check(): Promise<string[]>
  /** Checks now, then every `CHECK_EVERY_MS` at the chain engine's next quiet moment, until `stop`. */
  start(): Promise<void>
  stop(): Promise<void>
}

/**
 * The embedded database's planner statistics. PGlite runs PostgreSQL as one backend without its background
 * processes, so autovacuum never analyzes a table, and the planner guesses: with none, it judged a block's
 * verdicts (ten rows by primary key) by scanning every pending tracking, 25 ms against 3 ms once analyzed
 * (docs/performance.md, "Planner statistics on the embedded database"). This applies autovacuum's rule to the
 * cumulative statistics PGlite does keep, and analyzes a table with rows and no statistics at all (a folder an
 * earlier version wrote): at start, then every ten seconds. An analysis samples at most 3,000 rows of a table
 * (`EMBEDDED_STATISTICS_TARGET`), so its cost is bounded; it runs on the database's one connection like any statement.
 */
export function createEmbeddedStatistics(deps: {
  db: Db
  logger: Logger
  /** Resolves at the next moment the chain engine is quiet, after `maxWaitMs` at most (absent: at once). */
  quietMoment?: (maxWaitMs: number) => Promise<void>
  /** Between two checks (default `CHECK_EVERY_MS`). */
  checkEveryMs?: number
}): EmbeddedStatistics {
  let timer: NodeJS.Timeout | undefined
  let running: Promise<unknown> = Promise.resolve()
  let stopped = false
  // A stop does not wait for the quiet moment a due check waits for.
  let stopping!: () => void
  const stoppedNow = new Promise<void>((resolve) => (stopping = resolve))

  async function check(): Promise<string[]> {
    // This backend's own counts of changes reach the statistics at most once a second, at the end of a
    // transaction: flushed first, so that none is added after the analysis it preceded (a second one, to no use).
    await sql`SELECT pg_stat_force_next_flush()`.execute(deps.db)
    const { rows } = await sql<{ name: string }>`
      SELECT s.relname AS name FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
      WHERE s.n_mod_since_analyze > ${ANALYZE_THRESHOLD} + ${ANALYZE_SCALE_FACTOR} * greatest(c.reltuples, 0)
        -- Rows and no statistics at all: a folder written by an earlier version, or counts lost in a crash.
        OR (pg_relation_size(c.oid) > 0 AND NOT EXISTS (SELECT 1 FROM pg_statistic p WHERE p.starelid = c.oid))
      ORDER BY s.relname`.execute(deps.db)
    if (rows.length === 0) return []
    const started = performance.now()
    // Only ANALYZE reads this setting: the statements of others that run in between on the one connection are as before.
    await sql`SET default_statistics_target = ${sql.raw(String(EMBEDDED_STATISTICS_TARGET))}`.execute(deps.db)
    try {
      for (const { name } of rows) await sql`ANALYZE ${sql.id(name)}`.execute(deps.db)
    } finally {
      await sql`RESET default_statistics_target`.execute(deps.db)
    }
    const ms = Math.round(performance.now() - started)
    deps.logger.debug({ tables: rows.map((row) => row.name), ms }, 'embedded database analyzed')
    return rows.map((row) => row.name)
  }

  // The next check is armed once the last one ended, so two never run at once (one's RESET could come before
  // the other's ANALYZE, which would then sample at the default target).
  const arm = () => {
    if (stopped) return
    timer = setTimeout(() => {
      const quiet = deps.quietMoment?.(QUIET_WAIT_MS) ?? Promise.resolve()
      running = Promise.race([quiet, stoppedNow])
        .then(() => (stopped ? [] : check()))
        .catch((error: unknown) => deps.logger.warn({ err: error }, 'analyzing the embedded database failed'))
        .finally(arm)
    }, deps.checkEveryMs ?? CHECK_EVERY_MS)
    timer.unref()
  }

  return {
    check,
    async start() {
      await check()
      arm()
    },
    async stop() {
      stopped = true
      stopping()
      clearTimeout(timer)
      await running
    },
  }
}
