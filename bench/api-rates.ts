// bench:api's create and read loop as a function, for comparing one database with another in the same
// run (bench/scale-report.ts: an empty table against a million pending trackings). The service runs in
// its own process (bench/api-server.ts, no chain followers) with the node flags of `npm start`;
// autocannon drives it from this process, 50 connections.
import type { ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { freePort } from '../test/support/ports.ts'
import { readStat } from './proc-cpu.ts'
import { createAccountKey, startChild, stopChildren } from './service-child.ts'

interface Result {
  requests: { average: number }
  latency: { p50: number; p99: number }
  non2xx: number
  errors: number
}
interface RequestSpec {
  method: string
  path: string
  headers?: Record<string, string>
  setupRequest?: (request: RequestSpec) => RequestSpec
  body?: string
}
type Autocannon = (options: { url: string; connections: number; duration: number; requests: RequestSpec[] }) => Promise<Result>
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon
const root = fileURLToPath(new URL('../', import.meta.url))

export interface ApiRates {
  /** CPU ms per request of the service's process and of the PostgreSQL backends serving this database
   * (from /proc: unlike the rates, barely moved by other processes loading the machine). */
  createCpu: { service: number; postgres: number }
  readCpu: { service: number; postgres: number }
  creates: number
  createP50: number
  createP99: number
  reads: number
  readP50: number
  readP99: number
  failed: number
}

/** Creates for `seconds`, then reads each created record once (every answer signed) for `seconds`. */
export async function measureApiRates(options: {
  databaseUrl: string
  chain: { rpcUrl: string; chainId: number }
  seconds: number
  connections?: number
}): Promise<ApiRates> {
  const connections = options.connections ?? 50
  const dir = mkdtempSync(join(tmpdir(), 'paywatch-rates-'))
  const children: ChildProcess[] = []
  try {
    const adminToken = randomBytes(16).toString('hex')
    const configFile = join(dir, 'config.json')
    writeFileSync(configFile, JSON.stringify({ chains: { ethereum: { rpc: [options.chain.rpcUrl], chainId: options.chain.chainId } } }))
    const url = await startChild(
      'service',
      ['--max-semi-space-size=16', join(root, 'bench', 'api-server.ts')],
      {
        DATABASE_URL: options.databaseUrl,
        PORT: String(await freePort()),
        PAYWATCH_CONFIG: configFile,
        PAYWATCH_DATA_DIR: dir,
        PAYWATCH_ADMIN_TOKEN: adminToken,
        LOG_LEVEL: 'warn',
        PAYWATCH_RATE_RPS: '1000000',
        PAYWATCH_RATE_PARALLEL: '100000',
        PAYWATCH_RATE_DAILY: '1000000000',
      },
      children,
    )
    const { key } = await createAccountKey(url, adminToken)
    const run = randomBytes(4).toString('hex')
    let created = 0
    const body = (n: number) =>
      JSON.stringify({
        blockchain: 'ethereum',
        sender: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        nonce: n,
        receiver: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
        token: '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE',
        amount: '1.25',
        after_block: 1_000,
        secret_id: `rates-${run}-${n}`,
        callback: 'https://93.184.215.14/paywatch/callback',
        payload: { order: n },
      })
    const headers = { 'content-type': 'application/json', 'x-api-key': key }
    const creates: RequestSpec[] = [
      { method: 'POST', path: '/v2/payments', headers, setupRequest: (request) => ({ ...request, body: body(created++) }) },
    ]
    await autocannon({ url, connections, duration: 2, requests: creates })
    const servicePid = children[0]!.pid!
    const cpu = cpuMeter(options.databaseUrl, servicePid)
    const from = created
    const createStart = await cpu.read()
    const create = await autocannon({ url, connections, duration: options.seconds, requests: creates })
    const createEnd = await cpu.read()
    const to = created - 2 * connections
    let index = 0
    const reads: RequestSpec[] = [
      {
        method: 'GET',
        path: '/',
        headers,
        setupRequest: (request) => ({ ...request, path: `/v2/payments/rates-${run}-${from + (index++ % (to - from))}` }),
      },
    ]
    const read = await autocannon({ url, connections, duration: options.seconds, requests: reads })
    const readEnd = await cpu.read()
    await cpu.close()
    const perRequest = (start: CpuReading, end: CpuReading, answered: number) => ({
      service: (end.service - start.service) / answered,
      postgres: [...end.backends].reduce((sum, [pid, ms]) => sum + ms - (start.backends.get(pid) ?? 0), 0) / answered,
    })
    return {
      createCpu: perRequest(createStart, createEnd, create.requests.average * options.seconds),
      readCpu: perRequest(createEnd, readEnd, read.requests.average * options.seconds),
      creates: create.requests.average,
      createP50: create.latency.p50,
      createP99: create.latency.p99,
      reads: read.requests.average,
      readP50: read.latency.p50,
      readP99: read.latency.p99,
      failed: create.non2xx + create.errors + read.non2xx + read.errors,
    }
  } finally {
    await stopChildren(children)
    rmSync(dir, { recursive: true, force: true })
  }
}

interface CpuReading {
  service: number
  /** CPU ms per PostgreSQL backend connected to the database. */
  backends: Map<number, number>
}

/** CPU of the service process and of the database's PostgreSQL backends (pg_stat_activity, /proc). */
function cpuMeter(databaseUrl: string, servicePid: number) {
  const client = new pg.Client({ connectionString: databaseUrl })
  const connected = client.connect()
  return {
    async read(): Promise<CpuReading> {
      await connected
      const rows = await client.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      )
      const backends = new Map<number, number>()
      for (const { pid } of rows.rows) backends.set(pid, readStat(`/proc/${pid}/stat`)?.cpuMs ?? 0)
      return { service: readStat(`/proc/${servicePid}/stat`)?.cpuMs ?? 0, backends }
    },
    close: () => client.end(),
  }
}
