// npm run bench:api — the payments API against PostgreSQL, measured with autocannon in one run:
//   1. a bare Fastify route doing one `pg` insert (the baseline),
//   2. POST /v2/payments creating a new tracking per request (unique nonce and secret_id),
//   3. GET /v2/payments/{secret_id} reading them back: each once (every answer freshly signed), then
//      polling 1,000 of them (an unchanged record's signature is reused),
// each server in its own process (autocannon takes the other core), and prints req/s, p50/p99 and
// the creates/baseline ratio, and the raw async RSA-PSS signing rate of the machine (the ceiling of reads
// that each need a new signature). Targets (2 cores): ≥ 3,000 creates/s, ≥ 10,000 reads/s, ratio ≥ 0.6.
//
// Options (environment): DATABASE_URL (server to create a scratch database on; default local),
// BENCH_SECONDS (per measurement, default 10), BENCH_CONNECTIONS (default 50), BENCH_BACKGROUND=true
// to also run chain followers and callback workers in the service, BENCH_PROFILE=<dir> to write a CPU
// profile of the service there, BENCH_ONLY=create to stop after the creates, BENCH_CALLBACK=<url> to use another callback URL,
// PAYWATCH_PREPARED_STATEMENTS=false to measure the service without prepared statements, BENCH_NODE_FLAGS
// for extra node flags of the service (e.g. `--perf-basic-prof` for `perf record -p`).
import type { ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { startAnvil } from '../test/support/anvil.ts'
import { generateRsaKeyPair, parseRsaPrivateKey } from '../src/callbacks/signer.ts'
import { machineCpu, postgresCpuMs, postgresCpuSince, readStat } from './proc-cpu.ts'
import { rawSigningRate } from './raw-signing.ts'
import { freePort } from '../test/support/ports.ts'
import { createAccountKey, startChild, stopChildren } from './service-child.ts'

interface Histogram {
  average: number
  p50: number
  p99: number
  max: number
}
interface Result {
  requests: Histogram
  latency: Histogram
  non2xx: number
  errors: number
  timeouts: number
  '2xx': number
}
interface RequestSpec {
  method: string
  path: string
  headers?: Record<string, string>
  setupRequest?: (request: RequestSpec) => RequestSpec
  body?: string
}
type Autocannon = (options: {
  url: string
  connections: number
  duration: number
  pipelining?: number
  requests: RequestSpec[]
}) => Promise<Result>
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon

const root = fileURLToPath(new URL('../', import.meta.url))
const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50)
const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const ADMIN_TOKEN = randomBytes(16).toString('hex')

const children: ChildProcess[] = []
const cleanups: (() => Promise<void> | void)[] = []

async function main(): Promise<void> {
  console.log(`bench:api — ${cpus().length} cores, ${connections} connections, ${seconds} s per measurement, PostgreSQL`)
  const databaseUrl = await createDatabase()
  const anvil = await startAnvil()
  cleanups.push(() => anvil.stop())
  const dir = mkdtempSync(join(tmpdir(), 'paywatch-bench-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  const configFile = join(dir, 'config.json')
  writeFileSync(configFile, JSON.stringify({ chains: { ethereum: { rpc: [anvil.rpcUrl], chainId: anvil.chainId } } }))

  const [servicePort, barePort] = [await freePort(), await freePort()]
  // The V8 flags of `npm start` (package.json).
  const nodeFlags = [
    '--max-semi-space-size=16',
    ...(process.env.BENCH_PROFILE ? [`--cpu-prof`, `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : []),
    ...(process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
  ]
  const serviceUrl = await startChild(
    'service',
    [...nodeFlags, join(root, 'bench', 'api-server.ts'), ...(process.env.BENCH_BACKGROUND === 'true' ? ['--background'] : [])],
    {
      DATABASE_URL: databaseUrl,
      PORT: String(servicePort),
      PAYWATCH_CONFIG: configFile,
      PAYWATCH_DATA_DIR: dir,
      PAYWATCH_ADMIN_TOKEN: ADMIN_TOKEN,
      LOG_LEVEL: 'warn',
      PAYWATCH_RATE_RPS: '1000000',
      PAYWATCH_RATE_PARALLEL: '100000',
      PAYWATCH_RATE_DAILY: '1000000000',
      ...(process.env.PAYWATCH_PREPARED_STATEMENTS ? { PAYWATCH_PREPARED_STATEMENTS: process.env.PAYWATCH_PREPARED_STATEMENTS } : {}),
    },
    children,
  )
  const bareUrl = await startChild(
    'bare',
    [join(root, 'bench', 'bare-server.ts')],
    { DATABASE_URL: databaseUrl, PORT: String(barePort) },
    children,
  )
  const { key: apiKey } = await createAccountKey(serviceUrl, ADMIN_TOKEN)

  const run = randomBytes(4).toString('hex')
  // An IP literal: a host name costs a DNS lookup per create (the SSRF guard); BENCH_CALLBACK to measure that.
  const callback = process.env.BENCH_CALLBACK ?? 'https://93.184.215.14/paywatch/callback'
  let created = 0
  const createBody = (n: number) =>
    JSON.stringify({
      blockchain: 'ethereum',
      sender: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      nonce: n,
      receiver: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
      token: '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE',
      amount: '1.25',
      after_block: 1_000,
      secret_id: `bench-${run}-${n}`,
      callback,
      payload: { order: n },
    })
  const json = { 'content-type': 'application/json' }
  const bare = (): RequestSpec[] => [
    {
      method: 'POST',
      path: '/bare',
      headers: json,
      setupRequest: (request) => ({ ...request, body: createBody(created++) }),
    },
  ]
  const creates = (): RequestSpec[] => [
    {
      method: 'POST',
      path: '/v2/payments',
      headers: { ...json, 'x-api-key': apiKey },
      setupRequest: (request) => ({ ...request, body: createBody(created++) }),
    },
  ]
  const firstCreate = () => created
  let readIndex = 0
  const reads = (from: number, to: number): RequestSpec[] => [
    {
      method: 'GET',
      path: '/',
      headers: { ...json, 'x-api-key': apiKey },
      setupRequest: (request) => ({ ...request, path: `/v2/payments/bench-${run}-${from + (readIndex++ % (to - from))}` }),
    },
  ]

  // Warm-up: JIT, connection pools, caches.
  await measure(`${bareUrl}`, bare(), 2)
  await measure(`${serviceUrl}`, creates(), 2)

  const [servicePid, barePid] = [children[0]!.pid, children[1]!.pid]
  const baseline = await measure(bareUrl, bare(), seconds, barePid)
  const from = firstCreate()
  const create = await measure(serviceUrl, creates(), seconds, servicePid)
  if (process.env.BENCH_ONLY === 'create') {
    console.log(
      `creates/s ${Math.round(create.requests.average)}, bare ${Math.round(baseline.requests.average)}, server CPU ms/create ${create.cpuMsPerRequest?.toFixed(3)} (bare ${baseline.cpuMsPerRequest?.toFixed(3)})`,
    )
    printSplit([
      ['bare', baseline],
      ['create', create],
    ])
    return
  }
  // The last requests of a run may have been cut off: read only those surely answered.
  const to = created - 2 * connections
  // Reads of records not read before: each response is signed (x-signature, RSA-2048).
  readIndex = 0
  const read = await measure(serviceUrl, reads(from, to), seconds, servicePid)
  // Polling: the same 1,000 records again and again; an unchanged record's signature is reused.
  const hot = Math.min(1_000, to - from)
  readIndex = 0
  await measure(serviceUrl, reads(from, from + hot), 1)
  const poll = await measure(serviceUrl, reads(from, from + hot), seconds, servicePid)

  // What a freshly signed read costs at least: one RSA signature (docs/api.md §4), measured here, now.
  const signingKey = parseRsaPrivateKey((await generateRsaKeyPair()).privateKeyPem, 'bench key')
  const recordSized = Buffer.alloc(700, 'a')
  await rawSigningRate(signingKey, recordSized, 200)
  const rawSigning = await rawSigningRate(signingKey, recordSized, 5_000)

  const rows = [
    ['bare Fastify + one pg insert', baseline],
    ['POST /v2/payments (create)', create],
    [`GET /v2/payments/{secret_id}, ${to - from} records`, read],
    [`GET /v2/payments/{secret_id}, polling ${hot} records`, poll],
  ] as const
  console.log('')
  console.log('| measurement | req/s | p50 ms | p99 ms | server CPU ms/req | non-2xx | errors |')
  console.log('|---|---:|---:|---:|---:|---:|---:|')
  for (const [name, r] of rows) {
    const cpu = r.cpuMsPerRequest === null ? 'n/a' : r.cpuMsPerRequest.toFixed(3)
    console.log(
      `| ${name} | ${Math.round(r.requests.average)} | ${r.latency.p50} | ${r.latency.p99} | ${cpu} | ${r.non2xx} | ${r.errors + r.timeouts} |`,
    )
  }
  printSplit(rows)
  const ratio = create.requests.average / baseline.requests.average
  console.log('')
  console.log(`creates/s ${Math.round(create.requests.average)} (target ≥ 3000) ${create.requests.average >= 3000 ? 'OK' : 'BELOW'}`)
  for (const [name, r] of [
    ['reads/s (each signed)', read],
    ['reads/s (polling)', poll],
  ] as const) {
    console.log(`${name} ${Math.round(r.requests.average)} (target ≥ 10000) ${r.requests.average >= 10000 ? 'OK' : 'BELOW'}`)
  }
  console.log(`ratio creates / bare insert ${ratio.toFixed(2)} (target ≥ 0.6) ${ratio >= 0.6 ? 'OK' : 'BELOW'}`)
  console.log(
    `raw async RSA-PSS signing of this machine ${Math.round(rawSigning)}/s (both cores, nothing else): the ceiling of reads each signed anew, which reach ${((read.requests.average / rawSigning) * 100).toFixed(0)}% of it`,
  )
  const load = loadavg()[0]!
  if (load > cpus().length)
    console.log(`note: load average ${load.toFixed(1)} on ${cpus().length} cores while measuring: other processes shared the CPU`)
  for (const [name, r] of rows) {
    if (r.non2xx > 0 || r.errors > 0) console.log(`warning: ${name} had ${r.non2xx} non-2xx answers and ${r.errors} errors`)
  }
}

function printSplit(rows: readonly (readonly [string, Measured])[]): void {
  console.log('')
  console.log('Machine CPU per request, ms (all cores): | measurement | server | PostgreSQL | autocannon | other | idle |')
  console.log('|---|---:|---:|---:|---:|---:|')
  for (const [name, r] of rows) {
    if (!r.split) continue
    const s = r.split
    console.log(
      `| ${name} | ${s.server.toFixed(3)} | ${s.postgres.toFixed(3)} | ${s.loadGenerator.toFixed(3)} | ${s.other.toFixed(3)} | ${s.idle.toFixed(3)} |`,
    )
  }
}

type Measured = Result & { cpuMsPerRequest: number | null; split: CpuSplit | null }
/** Where the machine's CPU went during a measurement, in ms per answered request. */
interface CpuSplit {
  server: number
  postgres: number
  loadGenerator: number
  other: number
  idle: number
}

/** Runs autocannon against `url` and reads how much CPU the server process `pid` spent per request. */
async function measure(url: string, requests: RequestSpec[], duration: number, pid?: number): Promise<Measured> {
  const before = pid === undefined ? null : cpuMs(pid)
  const machineBefore = machineCpu()
  const postgresBefore = postgresCpuMs()
  const selfBefore = process.cpuUsage()
  const result = await autocannon({ url, connections, duration, pipelining: 1, requests })
  const after = pid === undefined ? null : cpuMs(pid)
  const answered = result.requests.average * duration
  const cpuMsPerRequest = before !== null && after !== null && answered > 0 ? (after - before) / answered : null
  const machineAfter = machineCpu()
  let split: CpuSplit | null = null
  if (cpuMsPerRequest !== null && machineBefore && machineAfter) {
    const self = process.cpuUsage(selfBefore)
    const server = cpuMsPerRequest
    const postgres = postgresCpuSince(postgresBefore) / answered
    const loadGenerator = (self.user + self.system) / 1000 / answered
    const busy = (machineAfter.busy - machineBefore.busy) / answered
    split = {
      server,
      postgres,
      loadGenerator,
      other: Math.max(0, busy - server - postgres - loadGenerator),
      idle: (machineAfter.idle - machineBefore.idle) / answered,
    }
  }
  return { ...result, cpuMsPerRequest, split }
}

/** CPU time (user + system) of a process in ms, from /proc (Linux); null elsewhere. */
const cpuMs = (pid: number): number | null => readStat(`/proc/${pid}/stat`)?.cpuMs ?? null

async function createDatabase(): Promise<string> {
  const name = `pw_bench_${randomBytes(5).toString('hex')}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  cleanups.push(async () => {
    const client = new pg.Client({ connectionString: adminUrl })
    await client.connect()
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await client.end()
  })
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}

async function cleanup(): Promise<void> {
  await stopChildren(children)
  for (const fn of cleanups.reverse()) await fn()
}

try {
  await main()
} finally {
  await cleanup()
}
