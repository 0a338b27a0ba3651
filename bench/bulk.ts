// npm run bench:bulk — registering many payments at once: BENCH_CREATES (default 20,000; the issue's
// figure is 100,000) creates through the API (BENCH_CONCURRENCY at a time, default 64), from random
// senders, while the service follows an Anvil that mines a block a second through a counting proxy.
// Prints creates/s and their latency (a stall of the main thread shows in the maximum), where the CPU went
// meanwhile (the service's main thread, the whole service, the load generator, the machine), when the last
// new tracking was checked against the chain (every sender's transaction count asked) counted from the last
// create, and the RPC requests per block before, during and after the creates. Embedded database unless
// DATABASE_URL is set.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ChildProcess } from 'node:child_process'
import { startAnvil } from '../test/support/index.ts'
import { createFreshDatabaseUrl, dropDatabase } from '../test/support/database.ts'
import { seedEmbeddedDataDir } from '../test/support/pglite-template.ts'
import { freePort } from '../test/support/ports.ts'
import { startRpcCounter } from './peers/rpc-counter.ts'
import { machineCpu, readStat } from './proc-cpu.ts'
import { createAccountKey, randomPaymentBody, SERVICE_MALLOC_ENV, startChild, stopChildren } from './service-child.ts'

const root = fileURLToPath(new URL('../', import.meta.url))
const CREATES = Number(process.env.BENCH_CREATES ?? 20_000)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64)
const ADMIN_TOKEN = randomBytes(16).toString('hex')
interface RequestSpec {
  method: string
  path: string
  headers: Record<string, string>
  setupRequest: (request: RequestSpec & { body?: string }) => RequestSpec & { body: string }
}
type Autocannon = (options: {
  url: string
  connections: number
  amount: number
  requests: RequestSpec[]
}) => Promise<{ '2xx': number; non2xx: number; errors: number; latency: { p50: number; p99: number; max: number } }>
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const anvil = await startAnvil({ blockTime: 1 })
const proxy = await startRpcCounter(anvil.rpcUrl, anvil.wsUrl)
const dir = mkdtempSync(join(tmpdir(), 'paywatch-bulk-'))
const children: ChildProcess[] = []
const databaseUrl = await createFreshDatabaseUrl()
try {
  if (!databaseUrl) await seedEmbeddedDataDir(dir)
  const configFile = join(dir, 'config.json')
  writeFileSync(configFile, JSON.stringify({ chains: { ethereum: { rpc: [proxy.httpUrl, proxy.wsUrl], chainId: anvil.chainId } } }))
  const url = await startChild(
    'service',
    ['--max-semi-space-size=16', join(root, 'bench', 'api-server.ts'), '--background'],
    {
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      PAYWATCH_CONFIG: configFile,
      PAYWATCH_DATA_DIR: dir,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      PAYWATCH_ADMIN_TOKEN: ADMIN_TOKEN,
      LOG_LEVEL: 'warn',
      ...SERVICE_MALLOC_ENV,
      PAYWATCH_RATE_RPS: '1000000',
      PAYWATCH_RATE_PARALLEL: '100000',
      PAYWATCH_RATE_DAILY: '1000000000',
    },
    children,
  )
  const { key } = await createAccountKey(url, ADMIN_TOKEN)
  const blockNow = async () => Number(await anvil.publicClient.getBlockNumber())
  const counts = () => proxy.methods.get('eth_getTransactionCount') ?? 0
  // Per block while following alone.
  await sleep(2_000)
  let [b0, r0] = [await blockNow(), proxy.requests]
  await sleep(5_000)
  const idlePerBlock = (proxy.requests - r0) / Math.max(1, (await blockNow()) - b0)
  const countsBefore = counts()

  const afterBlock = await blockNow()
  ;[b0, r0] = [afterBlock, proxy.requests]
  // The checks' requests are those holding transaction counts; the rest are the follower's (and the checks' few others).
  const checkRequests = () => proxy.requestsWith.get('eth_getTransactionCount') ?? 0
  const checksBefore = checkRequests()
  let created = 0
  // Where the machine's CPU goes during the creates: what bounds creates/s (see the figures printed).
  const servicePid = children[0]!.pid!
  const cpuNow = () => ({
    serviceMain: readStat(`/proc/${servicePid}/task/${servicePid}/stat`)?.cpuMs ?? 0,
    service: readStat(`/proc/${servicePid}/stat`)?.cpuMs ?? 0,
    generator: readStat('/proc/self/stat')?.cpuMs ?? 0,
    machine: machineCpu() ?? { busy: 0, idle: 0 },
  })
  const cpuBefore = cpuNow()
  const started = performance.now()
  const body = (serial: number) => randomPaymentBody({ label: 'bulk', serial, nonce: serial % 50, afterBlock })
  // autocannon, not fetch: at 64 requests at once fetch took ~70% of a core, on a machine of two.
  const result = await autocannon({
    url,
    connections: CONCURRENCY,
    amount: CREATES,
    requests: [
      {
        method: 'POST',
        path: '/v2/payments',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        setupRequest: (request) => ({ ...request, body: body(++created) }),
      },
    ],
  })
  if (result['2xx'] !== CREATES)
    throw new Error(`${CREATES - result['2xx']} creates failed (${result.non2xx} non-2xx, ${result.errors} errors)`)
  const lastCreate = performance.now()
  const createSeconds = (lastCreate - started) / 1000
  const cpuAfter = cpuNow()
  const share = (ms: number) => `${((100 * ms) / (lastCreate - started)).toFixed(0)}%`
  const machineMs = cpuAfter.machine.busy + cpuAfter.machine.idle - cpuBefore.machine.busy - cpuBefore.machine.idle
  const [b1, r1] = [await blockNow(), proxy.requests]
  const duringPerBlock = (r1 - r0) / Math.max(1, b1 - b0)
  const checksPerBlock = (checkRequests() - checksBefore) / Math.max(1, b1 - b0)
  // Checked: every new sender's transaction count was asked (one per tracking: random senders).
  while (counts() - countsBefore < CREATES && performance.now() - lastCreate < 900_000) await sleep(100)
  const checkedAfter = (performance.now() - lastCreate) / 1000
  const [b2, r2] = [await blockNow(), proxy.requests]
  const checkingPerBlock = (r2 - r1) / Math.max(1, b2 - b1)
  await sleep(5_000)
  const [b3, r3] = [await blockNow(), proxy.requests]
  const afterPerBlock = (r3 - r2) / Math.max(1, b3 - b2)
  console.log(
    `bench:bulk — ${databaseUrl ? 'PostgreSQL' : 'embedded database'}, ${CREATES.toLocaleString('en')} creates, ${CONCURRENCY} at a time\n` +
      `creates: ${(CREATES / createSeconds).toFixed(0)}/s (${createSeconds.toFixed(1)} s); ` +
      `latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms\n` +
      `CPU during the creates, % of one core: service main thread (HTTP, ${databaseUrl ? 'the pg driver' : 'PGlite'}, engine) ${share(cpuAfter.serviceMain - cpuBefore.serviceMain)}, ` +
      `service in all ${share(cpuAfter.service - cpuBefore.service)}, load generator ${share(cpuAfter.generator - cpuBefore.generator)}; ` +
      `machine busy ${((100 * (cpuAfter.machine.busy - cpuBefore.machine.busy)) / Math.max(1, machineMs)).toFixed(0)}% of all cores\n` +
      `all checked against the chain ${checkedAfter.toFixed(1)} s after the last create (${(counts() - countsBefore).toLocaleString('en')} transaction counts asked)\n` +
      `RPC requests per block: following alone ${idlePerBlock.toFixed(1)}, during the creates ${duringPerBlock.toFixed(1)} ` +
      `(the follower's ${(duringPerBlock - checksPerBlock).toFixed(1)}, the checks' count batches ${checksPerBlock.toFixed(1)}), ` +
      `after them until checked ${checkingPerBlock.toFixed(1)}, then ${afterPerBlock.toFixed(1)}`,
  )
} finally {
  await stopChildren(children)
  await proxy.close()
  await anvil.stop()
  rmSync(dir, { recursive: true, force: true })
  if (databaseUrl) await dropDatabase(databaseUrl)
}
process.exit(0)
