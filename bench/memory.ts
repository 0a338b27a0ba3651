// npm run bench:memory — the service in its own process (as `paywatch serve` runs it: node flags of
// `npm start`, heap growth limited, chain followers and callback workers on) on the embedded
// database with BENCH_PENDING (default 100,000) pending trackings, following a local Anvil that mines
// a block every second. After BENCH_SECONDS (default 30) of following, sampled every 5 s: RSS
// (/proc, anonymous and file-backed), V8 heap used/total, external and the WebAssembly memory
// (PGlite's linear memory: external memory outside ArrayBuffers). Target: RSS ≤ 300 MB.
// PAYWATCH_* variables (e.g. PAYWATCH_EMBEDDED_SHARED_BUFFERS_MB) are passed on to the service;
// BENCH_NODE_FLAGS adds node flags; MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_
// are what `npm start` sets unless given (BENCH_GLIBC_DEFAULTS=true: glibc's own thresholds);
// BENCH_NO_RELEASE=true runs the service without the release after bursts (src/cli/memory-release.ts). Then BENCH_CREATE_SECONDS (default 10) of creates through the API
// (32 at a time): creates/s and the RSS after them, and again BENCH_SETTLE_SECONDS (default 15) later.
// BENCH_MAPPINGS=true also prints the largest resident mappings after the creates (/proc/<pid>/smaps).
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ChildProcess } from 'node:child_process'
import { sql } from 'kysely'
import { createAccount } from '../src/store/accounts.ts'
import { openDatabase } from '../src/store/infrastructure/database.ts'
import { migrate } from '../src/store/infrastructure/migrate.ts'
import { startAnvil } from '../test/support/index.ts'
import { seedEmbeddedDataDir } from '../test/support/pglite-template.ts'
import { freePort } from '../test/support/ports.ts'
import { readStat } from './proc-cpu.ts'
import { askChild, createAccountKey, randomPaymentBody, startChild, stopChildren } from './service-child.ts'
import { forgetOwedChecks } from './bulk-pending.ts'

const root = fileURLToPath(new URL('../', import.meta.url))
const PENDING = Number(process.env.BENCH_PENDING ?? 100_000)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30)
const CREATE_SECONDS = Number(process.env.BENCH_CREATE_SECONDS ?? 10)
const ADMIN_TOKEN = randomBytes(16).toString('hex')
const NATIVE = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee'
const MB = 2 ** 20
const mb = (bytes: number) => (bytes / MB).toFixed(0)

interface Usage {
  rss: number
  heapUsed: number
  heapTotal: number
  external: number
  arrayBuffers: number
}

/** Minor page faults of a process so far (/proc/<pid>/stat field 10): memory given back and taken again costs faults. */
function minorFaults(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return Number(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[7])
}

/** The process's resident memory from /proc: anonymous (heaps, malloc, WebAssembly) and file-backed (code). */
function residentOf(pid: number): { total: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (name: string) => Number(status.match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm'))?.[1] ?? 0) * 1024
  return { total: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') + kb('RssShmem') }
}

/**
 * The process's largest resident mappings (/proc/<pid>/smaps): which of its memory is PGlite's linear memory
 * (one mapping reserved far larger than it uses), V8's heap pages, or malloc's arenas.
 */
function largestMappings(pid: number, count: number): string {
  const mappings: { name: string; size: number; rss: number }[] = []
  let current: { name: string; size: number; rss: number } | undefined
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = line.match(/^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/)
    if (header) {
      current = { name: header[3] || '[anon]', size: Number.parseInt(header[2]!, 16) - Number.parseInt(header[1]!, 16), rss: 0 }
      mappings.push(current)
      continue
    }
    const rss = line.match(/^Rss:\s+(\d+) kB/)
    if (rss && current) current.rss = Number(rss[1]) * 1024
  }
  return mappings
    .sort((a, b) => b.rss - a.rss)
    .slice(0, count)
    .map((m) => `${mb(m.rss)} of ${mb(m.size)} MB ${m.name.split('/').at(-1)}`)
    .join(', ')
}

const anvil = await startAnvil({ blockTime: 1 })
const dir = mkdtempSync(join(tmpdir(), 'paywatch-memory-'))
const children: ChildProcess[] = []
try {
  // The pending trackings, inserted in bulk before the service starts (PGlite has one process).
  await seedEmbeddedDataDir(dir)
  const seeding = await openDatabase({ databaseUrl: null, dataDir: dir })
  await migrate(seeding.db)
  const account = await createAccount(seeding.db, 'bench')
  await sql`
    INSERT INTO trackings (id, account_id, secret_id, shape, blockchain, sender, nonce, receiver, token, decimals,
      commitment, confirmations, after_block, amount, transaction, callback, status, created_at, updated_at)
    SELECT md5('id' || g), ${account.id}, md5('secret' || g), 'current', 'ethereum',
      '0x' || substr(md5('s' || g), 1, 32) || substr(md5('t' || g), 1, 8), g % 100,
      '0x' || substr(md5('r' || g), 1, 32) || substr(md5('q' || g), 1, 8), ${NATIVE}, 18, 'confirmed', 1, 0, '1',
      CASE WHEN g % 2 = 0 THEN '0x' || md5('h' || g) || md5('k' || g) END, 'https://merchant.example/cb',
      'pending', now(), now()
    FROM generate_series(1, ${PENDING}::int) AS g`.execute(seeding.db)
  await forgetOwedChecks(seeding.db)
  await sql`ANALYZE trackings`.execute(seeding.db)
  await seeding.close()

  const configFile = join(dir, 'config.json')
  writeFileSync(configFile, JSON.stringify({ chains: { ethereum: { rpc: [anvil.rpcUrl, anvil.wsUrl], chainId: anvil.chainId } } }))
  const passedOn = Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && /^(PAYWATCH_|MALLOC_|BENCH_NO_RELEASE$)/.test(entry[0]),
    ),
  )
  const nodeFlags = ['--max-semi-space-size=16', ...(process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? [])]
  const serviceUrl = await startChild(
    'service',
    [...nodeFlags, join(root, 'bench', 'api-server.ts'), '--background'],
    {
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      PAYWATCH_CONFIG: configFile,
      PAYWATCH_DATA_DIR: dir,
      PAYWATCH_ADMIN_TOKEN: ADMIN_TOKEN,
      LOG_LEVEL: 'warn',
      // As `npm start` and `npx paywatch` run it (bin/paywatch.js); MALLOC_ARENA_MAX=16 compares, and
      // BENCH_GLIBC_DEFAULTS=true leaves glibc's dynamic mmap and trim thresholds.
      MALLOC_ARENA_MAX: '2',
      ...(process.env.BENCH_GLIBC_DEFAULTS === 'true' ? {} : { MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '131072' }),
      PAYWATCH_RATE_RPS: '1000000',
      PAYWATCH_RATE_PARALLEL: '100000',
      PAYWATCH_RATE_DAILY: '1000000000',
      ...passedOn,
    },
    children,
    { ipc: true },
  )
  const service = children[0]!
  console.log(
    `bench:memory — embedded database, ${PENDING.toLocaleString('en')} pending, ${SECONDS} s following a block a second; ` +
      `node flags ${nodeFlags.join(' ')}${
        Object.keys(passedOn).length
          ? `; ${Object.entries(passedOn)
              .map(([k, v]) => `${k}=${v}`)
              .join(' ')}`
          : ''
      }`,
  )
  const samples: { at: number; rss: ReturnType<typeof residentOf>; usage: Usage }[] = []
  const started = Date.now()
  for (let at = 0; at <= SECONDS; at += 5) {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + at * 1000 - Date.now())))
    const { usage } = await askChild<{ usage: Usage }>(service, 'memory')
    samples.push({ at, rss: residentOf(service.pid!), usage })
  }
  console.log()
  console.log(
    '| t s | RSS MB | anon MB | file MB | heap used MB | heap total MB | external MB | WebAssembly (external − ArrayBuffers) MB |',
  )
  console.log('|---|---|---|---|---|---|---|---|')
  for (const s of samples) {
    console.log(
      `| ${s.at} | ${mb(s.rss.total)} | ${mb(s.rss.anon)} | ${mb(s.rss.file)} | ${mb(s.usage.heapUsed)} | ${mb(s.usage.heapTotal)} | ` +
        `${mb(s.usage.external)} | ${mb(s.usage.external - s.usage.arrayBuffers)} |`,
    )
  }
  const peak = Math.max(...samples.map((s) => s.rss.total))
  const last = samples.at(-1)!
  console.log()
  console.log(`RSS peak ${mb(peak)} MB, last ${mb(last.rss.total)} MB (target ≤ 300 MB)`)

  // Creates through the API: what a smaller shared_buffers could cost in speed.
  const { key } = await createAccountKey(serviceUrl, ADMIN_TOKEN)
  const afterBlock = Number(await anvil.publicClient.getBlockNumber())
  let created = 0
  const createsEnd = Date.now() + CREATE_SECONDS * 1000
  const createsStart = Date.now()
  const cpuBefore = readStat(`/proc/${service.pid}/stat`)?.cpuMs ?? 0
  const faultsBefore = minorFaults(service.pid!)
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (Date.now() < createsEnd) {
        const serial = ++created
        const res = await fetch(`${serviceUrl}/v2/payments`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key },
          body: randomPaymentBody({ label: 'memory', serial, nonce: serial, afterBlock }),
        })
        const body = await res.text()
        if (res.status !== 201) throw new Error(`create answered ${res.status}: ${body}`)
      }
    }),
  )
  const createRate = created / ((Date.now() - createsStart) / 1000)
  // The service's CPU per create: what a setting costs, readable on a machine others load (creates/s is not).
  const cpuPerCreate = ((readStat(`/proc/${service.pid}/stat`)?.cpuMs ?? 0) - cpuBefore) / created
  const faultsPerCreate = (minorFaults(service.pid!) - faultsBefore) / created
  const { usage } = await askChild<{ usage: Usage }>(service, 'memory')
  const after = residentOf(service.pid!)
  if (process.env.BENCH_SNAPSHOT) {
    // A heap snapshot of what the burst left (e.g. to compare the constructors' retained sizes).
    await askChild(service, { snapshot: process.env.BENCH_SNAPSHOT })
  }
  if (process.env.BENCH_MAPPINGS === 'true') console.log(`largest mappings after the creates: ${largestMappings(service.pid!, 8)}`)
  const collected = await askChild<{ usage: Usage }>(service, 'gc')
  console.log(
    `creates: ${createRate.toFixed(0)}/s over ${CREATE_SECONDS} s, service CPU ${cpuPerCreate.toFixed(2)} ms and ${faultsPerCreate.toFixed(1)} page faults per create; after them RSS ${mb(after.total)} MB (anon ${mb(after.anon)}, ` +
      `heap used ${mb(usage.heapUsed)} of ${mb(usage.heapTotal)}, WebAssembly ${mb(usage.external - usage.arrayBuffers)} MB)` +
      (process.env.BENCH_NODE_FLAGS?.includes('--expose-gc')
        ? `; after a full collection: heap used ${mb(collected.usage.heapUsed)} MB, RSS ${mb(residentOf(service.pid!).total)} MB`
        : ''),
  )
  // Following on for a while after the burst: whether the memory it took comes back.
  const settle = Number(process.env.BENCH_SETTLE_SECONDS ?? 15)
  await new Promise((resolve) => setTimeout(resolve, settle * 1000))
  const settled = await askChild<{ usage: Usage; releases: number }>(service, 'memory')
  const rest = residentOf(service.pid!)
  console.log(
    `${settle} s after the creates (following blocks): RSS ${mb(rest.total)} MB (anon ${mb(rest.anon)}, heap used ` +
      `${mb(settled.usage.heapUsed)} of ${mb(settled.usage.heapTotal)}, WebAssembly ${mb(settled.usage.external - settled.usage.arrayBuffers)} MB; ` +
      `${settled.releases} release(s) after bursts)`,
  )
} finally {
  await stopChildren(children)
  rmSync(dir, { recursive: true, force: true })
  await anvil.stop()
}
