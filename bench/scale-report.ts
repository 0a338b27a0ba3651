// What bench:tracking prints after its largest size when BENCH_SCALE_REPORT=true (docs/performance.md,
// "A million pending trackings"): the tables' and indexes' sizes, every query that walks pending or
// completed trackings timed (p50/p99) and EXPLAINed (ANALYZE: the index it used and the rows it read),
// and on PostgreSQL bench:api's create and read rates against an empty table and against this one,
// alternately, in the same run.
import { performance } from 'node:perf_hooks'
import { CompiledQuery, sql, type KyselyPlugin } from 'kysely'
import type { Db } from '../src/store/infrastructure/database.ts'
import { callbackLatencyPerBucket, completedPerBucket } from '../src/store/dashboard-charts.ts'
import { searchPayments } from '../src/store/dashboard-payments.ts'
import { countPendingTrackings } from '../src/store/pending-counts.ts'
import { findBlockCandidates } from '../src/store/block-candidates.ts'
import { findExpiredTrackings, findMatchedTrackings } from '../src/store/tracking-matches.ts'
import { createFreshDatabaseUrl, dropDatabase } from '../test/support/database.ts'
import { measureApiRates, type ApiRates } from './api-rates.ts'

const RUNS = Number(process.env.BENCH_QUERY_RUNS ?? 40)
const API_SECONDS = Number(process.env.BENCH_API_SECONDS ?? 5)
const API_ROUNDS = Number(process.env.BENCH_API_ROUNDS ?? 2)
const MB = 2 ** 20

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

export interface ScaleReportContext {
  db: Db
  kind: 'postgres' | 'pglite'
  databaseUrl: string | null
  accountId: string
  chain: string
  rpc: { rpcUrl: string; chainId: number }
}

export async function scaleReport(context: ScaleReportContext): Promise<void> {
  await printSizes(context.db)
  await printBoundedQueries(context)
  if (context.kind === 'postgres' && context.databaseUrl && API_ROUNDS > 0) await printApiRates(context)
}

async function printSizes(db: Db): Promise<void> {
  const tables = await sql<{ name: string; rows: string; total: string; heap: string; indexes: string }>`
    SELECT c.relname AS name, c.reltuples::bigint AS rows, pg_total_relation_size(c.oid) AS total,
      pg_relation_size(c.oid) AS heap, pg_indexes_size(c.oid) AS indexes
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relkind = 'r'
    ORDER BY pg_total_relation_size(c.oid) DESC LIMIT 6`.execute(db)
  console.log()
  console.log('| table | rows (estimate) | total MB | table MB | indexes MB |')
  console.log('|---|---:|---:|---:|---:|')
  for (const t of tables.rows)
    console.log(
      `| ${t.name} | ${Number(t.rows).toLocaleString('en')} | ${(Number(t.total) / MB).toFixed(1)} | ${(Number(t.heap) / MB).toFixed(1)} | ${(Number(t.indexes) / MB).toFixed(1)} |`,
    )
  const indexes = await sql<{ name: string; size: string }>`
    SELECT i.indexrelid::regclass::text AS name, pg_relation_size(i.indexrelid) AS size
    FROM pg_index i WHERE i.indrelid = 'trackings'::regclass ORDER BY 2 DESC`.execute(db)
  console.log()
  console.log(`trackings' indexes, MB: ${indexes.rows.map((i) => `${i.name} ${(Number(i.size) / MB).toFixed(1)}`).join(', ')}`)
}

interface NamedQuery {
  name: string
  run: (db: Db) => Promise<unknown>
}

async function printBoundedQueries(context: ScaleReportContext): Promise<void> {
  const { db, chain, accountId } = context
  // Inputs taken from the table as it is (not timed).
  const pick = await sql<{ sender: string | null; secret_id: string; transaction: string | null }>`
    SELECT sender, secret_id, transaction FROM trackings
    WHERE status = 'pending' AND sender IS NOT NULL AND transaction IS NOT NULL LIMIT 1`.execute(db)
  const sample = pick.rows[0]!
  const middle = await sql<{ created_at: Date; id: string }>`
    SELECT created_at, id FROM trackings WHERE status = 'pending' ORDER BY created_at DESC, id DESC
    OFFSET (SELECT (count(*) / 2)::int FROM trackings WHERE status = 'pending') LIMIT 1`.execute(db)
  const deep = { createdAt: new Date(middle.rows[0]!.created_at), id: middle.rows[0]!.id }
  const now = new Date()
  const hoursAgo = (h: number) => new Date(now.getTime() - h * 3_600_000)
  const blockTransactions = Array.from({ length: 200 }, (_, i) => ({
    sender: `0x${i.toString(16).padStart(40, 'a')}`,
    nonce: BigInt(i),
    hash: `0x${i.toString(16).padStart(64, 'b')}`,
  }))
  const queries: NamedQuery[] = [
    { name: 'sweeper: next 200 timed out (cutoff 1 h ago)', run: (db) => findExpiredTrackings(db, 3_600, 200) },
    { name: 'sweeper: none timed out (cutoff 24 h ago)', run: (db) => findExpiredTrackings(db, 86_400, 200) },
    {
      name: 'deadline time-outs: next 200 past a block timestamp',
      run: (db) =>
        db
          .selectFrom('trackings')
          .select('id')
          .where('blockchain', '=', chain)
          .where('status', '=', 'pending')
          .where('deadline', 'is not', null)
          .where('deadline', '<', String(Math.floor(now.getTime() / 1000) + 25 * 3_600))
          .orderBy('deadline')
          .limit(200)
          .execute(),
    },
    { name: 'pending count per chain (metrics gauge, overview)', run: (db) => countPendingTrackings(db, [chain]) },
    {
      name: 'engine: block candidates (200 transactions)',
      run: (db) => findBlockCandidates(db, chain, blockTransactions, BigInt(Math.floor(now.getTime() / 1000))),
    },
    { name: 'engine: stored matches of the chain', run: (db) => findMatchedTrackings(db, chain) },
    {
      name: 'API read: by secret_id',
      run: (db) =>
        db.selectFrom('trackings').selectAll().where('account_id', '=', accountId).where('secret_id', '=', sample.secret_id).execute(),
    },
    { name: 'list: newest 50', run: (db) => searchPayments(db, { limit: 50 }) },
    { name: 'list: pending', run: (db) => searchPayments(db, { status: 'pending', limit: 50 }) },
    { name: 'list: pending, page in the middle', run: (db) => searchPayments(db, { status: 'pending', before: deep, limit: 50 }) },
    { name: 'list: success', run: (db) => searchPayments(db, { status: 'success', limit: 50 }) },
    { name: 'list: failed', run: (db) => searchPayments(db, { status: 'failed', limit: 50 }) },
    { name: 'list: chain', run: (db) => searchPayments(db, { chain, limit: 50 }) },
    { name: 'list: chain with no payment (window)', run: (db) => searchPayments(db, { chain: 'nowhere', limit: 50 }) },
    { name: 'list: account', run: (db) => searchPayments(db, { accountId, limit: 50 }) },
    { name: 'list: account + success', run: (db) => searchPayments(db, { accountId, status: 'success', limit: 50 }) },
    { name: 'search: sender', run: (db) => searchPayments(db, { search: sample.sender!, limit: 50 }) },
    { name: 'search: secret_id', run: (db) => searchPayments(db, { search: sample.secret_id, limit: 50 }) },
    { name: 'search: transaction', run: (db) => searchPayments(db, { search: sample.transaction!, limit: 50 }) },
    { name: 'chart: completed per minute, 3 h', run: (db) => completedPerBucket(db, hoursAgo(3), 60) },
    { name: 'chart: callback latency per 5 min, 3 h', run: (db) => callbackLatencyPerBucket(db, hoursAgo(3), 300) },
  ]
  console.log()
  console.log(`Queries over pending and completed trackings, ${RUNS} runs each (plans: EXPLAIN ANALYZE of one run):`)
  console.log()
  console.log('| query | p50 ms | p99 ms | plan (node, index, rows read) |')
  console.log('|---|---:|---:|---|')
  for (const query of queries) {
    await query.run(db)
    const times: number[] = []
    for (let i = 0; i < RUNS; i++) {
      const start = performance.now()
      await query.run(db)
      times.push(performance.now() - start)
    }
    const plans = await explain(db, query)
    console.log(`| ${query.name} | ${percentile(times, 50).toFixed(2)} | ${percentile(times, 99).toFixed(2)} | ${plans.join(' ; ')} |`)
  }
}

/** The statements a query function runs, each EXPLAIN ANALYZEd and summed up in one line. */
async function explain(db: Db, query: NamedQuery): Promise<string[]> {
  // Subqueries pass transformQuery too; only the statements that ran have a result.
  const compiled = new Map<unknown, CompiledQuery>()
  const ran: CompiledQuery[] = []
  const capture: KyselyPlugin = {
    transformQuery: (args) => {
      compiled.set(args.queryId, db.getExecutor().compileQuery(args.node, args.queryId))
      return args.node
    },
    transformResult: async (args) => {
      const statement = compiled.get(args.queryId)
      if (statement) ran.push(statement)
      return args.result
    },
  }
  await query.run(db.withPlugin(capture))
  const lines: string[] = []
  for (const statement of ran) {
    if (/^\s*explain/i.test(statement.sql)) {
      lines.push('planner estimate only')
      continue
    }
    const result = await db.executeQuery<{ 'QUERY PLAN': unknown }>(
      CompiledQuery.raw(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.sql}`, [...statement.parameters]),
    )
    const raw = result.rows[0]!['QUERY PLAN']
    const plan = (typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: PlanNode }]
    lines.push(summarize(plan[0].Plan))
  }
  return lines
}

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  'Actual Rows'?: number
  'Actual Loops'?: number
  'Rows Removed by Filter'?: number
  Plans?: PlanNode[]
}

/** The scans of a plan: "Index Scan trackings_pending_created_id 51", a sequential scan flagged. */
function summarize(node: PlanNode): string {
  const scans: string[] = []
  const visit = (n: PlanNode) => {
    if (/Scan/.test(n['Node Type']) && n['Node Type'] !== 'Subquery Scan' && n['Node Type'] !== 'CTE Scan') {
      const rows = Math.round((n['Actual Rows'] ?? 0) * (n['Actual Loops'] ?? 1)) + (n['Rows Removed by Filter'] ?? 0)
      const target = n['Index Name'] ?? n['Relation Name'] ?? ''
      const flag = n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'trackings' ? ' **SEQUENTIAL**' : ''
      scans.push(`${n['Node Type']} ${target} ${rows}${flag}`)
    }
    for (const child of n.Plans ?? []) visit(child)
  }
  visit(node)
  return scans.join(', ') || node['Node Type']
}

async function printApiRates(context: ScaleReportContext): Promise<void> {
  console.log()
  console.log(
    `bench:api's creates and reads (${API_SECONDS} s each, 50 connections): an empty database and this one, alternately, ${API_ROUNDS} rounds`,
  )
  const results: { table: string; rates: ApiRates }[] = []
  for (let round = 0; round < API_ROUNDS; round++) {
    const empty = await createFreshDatabaseUrl()
    try {
      results.push({ table: 'empty', rates: await measureApiRates({ databaseUrl: empty!, chain: context.rpc, seconds: API_SECONDS }) })
    } finally {
      await dropDatabase(empty!)
    }
    results.push({
      table: 'this one',
      rates: await measureApiRates({ databaseUrl: context.databaseUrl!, chain: context.rpc, seconds: API_SECONDS }),
    })
  }
  console.log()
  console.log(
    '| round | table | creates/s | p50 / p99 ms | CPU ms/create: service, PostgreSQL | reads/s (each signed) | p50 / p99 ms | CPU ms/read: service, PostgreSQL | failed |',
  )
  console.log('|---|---|---:|---|---|---:|---|---|---:|')
  results.forEach(({ table, rates }, i) =>
    console.log(
      `| ${Math.floor(i / 2) + 1} | ${table} | ${rates.creates.toFixed(0)} | ${rates.createP50} / ${rates.createP99} | ` +
        `${rates.createCpu.service.toFixed(3)}, ${rates.createCpu.postgres.toFixed(3)} | ${rates.reads.toFixed(0)} | ` +
        `${rates.readP50} / ${rates.readP99} | ${rates.readCpu.service.toFixed(3)}, ${rates.readCpu.postgres.toFixed(3)} | ${rates.failed} |`,
    ),
  )
  // Per round (empty, then this one, back to back), then the median of the rounds: the shared machine's
  // load moves between rounds more than within one.
  const ratios = (field: 'creates' | 'reads') =>
    Array.from({ length: API_ROUNDS }, (_, round) => results[2 * round + 1]!.rates[field] / results[2 * round]!.rates[field])
  const median = (values: number[]) => {
    const sorted = values.toSorted((a, b) => a - b)
    return sorted.length % 2 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2
  }
  const sum = (table: string, field: 'creates' | 'reads') =>
    results.filter((r) => r.table === table).reduce((total, r) => total + r.rates[field], 0)
  console.log()
  // CPU per request, summed over the rounds: what the table's size costs, little moved by the machine's load.
  const cpu = (table: string, field: 'createCpu' | 'readCpu') =>
    results.filter((r) => r.table === table).reduce((total, r) => total + r.rates[field].service + r.rates[field].postgres, 0)
  console.log(
    `CPU ms per request (service + PostgreSQL), this table / empty: creates ×${(cpu('this one', 'createCpu') / cpu('empty', 'createCpu')).toFixed(2)}, ` +
      `reads ×${(cpu('this one', 'readCpu') / cpu('empty', 'readCpu')).toFixed(2)} (≤ 1.1: the rates would keep within 10% on a quiet machine)`,
  )
  for (const field of ['creates', 'reads'] as const)
    console.log(
      `ratio this table / empty, ${field}/s: per round ${ratios(field)
        .map((r) => `×${r.toFixed(2)}`)
        .join(
          ', ',
        )}; median ×${median(ratios(field)).toFixed(2)}; all rounds summed ×${(sum('this one', field) / sum('empty', field)).toFixed(2)} (target ≥ 0.9)`,
    )
}
