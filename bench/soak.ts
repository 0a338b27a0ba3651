// npm run bench:soak — the service's memory under sustained load. The service runs in its own process
// (bench/api-server.ts with chain engine and callback workers, the V8 flags of `npm start`) on
// PostgreSQL (DATABASE_URL; without it the embedded database) with a real Anvil mining a block a second.
// 25,000 pending trackings are seeded first (on PostgreSQL in bulk, copies of one created through the API); then, for BENCH_SECONDS (default 240;
// or the first argument), ~100 creates/s, ~300 reads/s (each of another record, so each freshly signed)
// and ~8 payments/s paid on Anvil that complete and call back a local receiver. Every BENCH_SAMPLE
// seconds (default 5) the service's RSS (/proc), heap used/total, external and arrayBuffers (its
// process.memoryUsage() over IPC) are sampled; a table, the peak and final figures and the service's
// /proc smaps_rollup follow. Target: RSS ≤ 250 MB at that load.
// Options (environment): BENCH_PENDING (default 25000), BENCH_CREATES / BENCH_READS / BENCH_PAYMENTS
// (per second), BENCH_NODE_FLAGS (extra node flags of the service, e.g. `--max-semi-space-size=4` to
// replace npm start's); BENCH_HEAP_SNAPSHOT=<file> writes a heap snapshot of the service at the end; MALLOC_ARENA_MAX, UV_THREADPOOL_SIZE and
// PAYWATCH_* are passed on to the service. Every request goes to 127.0.0.1 and the run ends by itself.
import type { ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import type { HeapInfo, HeapSpaceInfo } from 'node:v8'
import { startAnvil } from '../test/support/anvil.ts'
import { createFreshDatabaseUrl, dropDatabase } from '../test/support/database.ts'
import { seedEmbeddedDataDir } from '../test/support/pglite-template.ts'
import { freePort } from '../test/support/ports.ts'
import { askChild, createAccountKey, startChild, stopChildren } from './service-child.ts'

const root = fileURLToPath(new URL('../', import.meta.url))
const SECONDS = Number(process.argv[2] ?? process.env.BENCH_SECONDS ?? 240)
const SAMPLE_SECONDS = Number(process.env.BENCH_SAMPLE ?? 5)
const PENDING = Number(process.env.BENCH_PENDING ?? 25_000)
const CREATES = Number(process.env.BENCH_CREATES ?? 100)
const READS = Number(process.env.BENCH_READS ?? 300)
const PAYMENTS = Number(process.env.BENCH_PAYMENTS ?? 8)
/** Requests in flight at most: past it a due request is skipped (and counted), not queued without end. */
const MAX_IN_FLIGHT = 256
const NATIVE = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE'
const ADMIN_TOKEN = randomBytes(16).toString('hex')
const MB = 2 ** 20

interface Usage {
  rss: number
  heapUsed: number
  heapTotal: number
  external: number
  arrayBuffers: number
}
interface Sample {
  at: number
  phase: string
  rss: Rss
  usage: Usage
  spaces: HeapSpaceInfo[]
  heap: HeapInfo
  gc: Gc
  pending: number
}
/** Garbage collections since the service started and their main-thread time. */
interface Gc {
  count: number
  ms: number
}
/** The process's resident memory (/proc/<pid>/status): anonymous (heaps, malloc) and file-backed (the node binary). */
interface Rss {
  total: number
  anon: number
  file: number
}

const children: ChildProcess[] = []
const cleanups: (() => Promise<void> | void)[] = []

async function main(): Promise<void> {
  const databaseUrl = await createFreshDatabaseUrl()
  if (databaseUrl) cleanups.push(() => dropDatabase(databaseUrl))
  const anvil = await startAnvil({ blockTime: 1 })
  cleanups.push(() => anvil.stop())
  const dir = mkdtempSync(join(tmpdir(), 'paywatch-soak-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  if (!databaseUrl) await seedEmbeddedDataDir(dir)
  const configFile = join(dir, 'config.json')
  // Requests over HTTP, newHeads over WebSocket, as bench:tracking.
  writeFileSync(configFile, JSON.stringify({ chains: { ethereum: { rpc: [anvil.rpcUrl, anvil.wsUrl], chainId: anvil.chainId } } }))

  const receiver = await startReceiver()
  cleanups.push(() => receiver.close())
  const passedOn = Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && /^(PAYWATCH_|MALLOC_ARENA_MAX$|UV_THREADPOOL_SIZE$)/.test(entry[0]),
    ),
  )
  // The V8 flags of `npm start` (package.json); a later flag of BENCH_NODE_FLAGS overrides.
  const nodeFlags = ['--max-semi-space-size=16', ...(process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? [])]
  const serviceUrl = await startChild(
    'service',
    [...nodeFlags, join(root, 'bench', 'api-server.ts'), '--background'],
    {
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      PAYWATCH_CONFIG: configFile,
      PAYWATCH_DATA_DIR: dir,
      PAYWATCH_ADMIN_TOKEN: ADMIN_TOKEN,
      LOG_LEVEL: 'warn',
      PAYWATCH_ALLOW_PRIVATE_CALLBACKS: 'true',
      PAYWATCH_RATE_RPS: '1000000',
      PAYWATCH_RATE_PARALLEL: '100000',
      PAYWATCH_RATE_DAILY: '1000000000',
      ...passedOn,
    },
    children,
    { ipc: true },
  )
  const service = children[0]!
  const { key } = await createAccountKey(serviceUrl, ADMIN_TOKEN)
  console.log(
    `bench:soak — ${databaseUrl ? 'PostgreSQL' : 'embedded database'}, ${PENDING.toLocaleString('en')} pending seeded, ` +
      `${SECONDS} s at ${CREATES} creates/s, ${READS} reads/s, ${PAYMENTS} payments/s; service node flags: ${nodeFlags.join(' ')}` +
      `${
        Object.keys(passedOn).length
          ? `; env ${Object.entries(passedOn)
              .map(([k, v]) => `${k}=${v}`)
              .join(' ')}`
          : ''
      }`,
  )

  const headers = { 'content-type': 'application/json', 'x-api-key': key }
  const afterBlock = Number(await anvil.publicClient.getBlockNumber())
  const secrets: string[] = []
  let serial = 0
  /** A pending tracking nobody pays: a random sender (and callback to the receiver, should it ever end). */
  const createPending = async () => {
    const secret = `soak-${++serial}`
    const res = await fetch(`${serviceUrl}/v2/payments`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        blockchain: 'ethereum',
        sender: `0x${randomBytes(20).toString('hex')}`,
        nonce: serial,
        receiver: `0x${randomBytes(20).toString('hex')}`,
        token: NATIVE,
        amount: '1.25',
        after_block: afterBlock,
        secret_id: secret,
        callback: receiver.url,
        payload: { order: serial },
      }),
    })
    await res.arrayBuffer()
    if (res.status !== 201) throw new Error(`create answered ${res.status}`)
    secrets.push(secret)
  }
  const read = async () => {
    const res = await fetch(`${serviceUrl}/v2/payments/${secrets[Math.floor(Math.random() * secrets.length)]}`, { headers })
    await res.arrayBuffer()
    if (res.status !== 200) throw new Error(`read answered ${res.status}`)
  }

  const samples: Sample[] = []
  const sample = async (phase: string, at: number) => {
    const memory = await askChild<{ usage: Usage; spaces: HeapSpaceInfo[]; heap: HeapInfo; gc: Gc }>(service, 'memory')
    samples.push({ at, phase, rss: residentOf(service.pid!), ...memory, pending: secrets.length })
    const s = samples.at(-1)!
    console.log(
      `${phase.padEnd(6)} ${String(Math.round(at)).padStart(4)} s  RSS ${mb(s.rss.total)}  heap used ${mb(s.usage.heapUsed)}  heap total ${mb(s.usage.heapTotal)}  ` +
        `external ${mb(s.usage.external)}  arrayBuffers ${mb(s.usage.arrayBuffers)}  (MB)`,
    )
  }

  // --- seeding: the pending trackings. On PostgreSQL copies of one created through the API, inserted in
  // bulk (seconds, and the service does not see them coming); embedded, the API at 32 creates at a time.
  const seedStart = performance.now()
  if (databaseUrl) {
    await createPending()
    await copyTracking(databaseUrl, secrets[0]!, PENDING - 1)
    for (let i = 2; i <= PENDING; i++) secrets.push(`soak-${i}`)
    serial = PENDING
  } else {
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (serial < PENDING) await createPending()
      }),
    )
  }
  console.log(`seeded ${secrets.length.toLocaleString('en')} pending in ${((performance.now() - seedStart) / 1000).toFixed(0)} s`)
  // The seeding ran flat out, harder than the soak: a pause in which V8's memory reducer (after 8 s of
  // little allocation) can give back what only the seeding needed, as for a service that got there slowly.
  await sample('seeded', 0)
  await new Promise((resolve) => setTimeout(resolve, 15_000))

  // --- payments: anvil's accounts 2..9 pay a fixed receiver, each payment registered just before ---------
  const payers = anvil.accounts.slice(2, 10)
  const nonces = await Promise.all(payers.map((payer) => anvil.publicClient.getTransactionCount({ address: payer.address })))
  const payee = anvil.accounts[1]!.address
  const payerQueues = payers.map(() => Promise.resolve())
  let paymentSerial = 0
  const pay = (): Promise<void> => {
    const number = ++paymentSerial
    const index = number % payers.length
    const payer = payers[index]!
    const done = payerQueues[index]!.then(async () => {
      const nonce = nonces[index]!++
      const secret = `soak-pay-${number}`
      try {
        const res = await fetch(`${serviceUrl}/v2/payments`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            blockchain: 'ethereum',
            sender: payer.address,
            nonce,
            receiver: payee,
            token: NATIVE,
            amount: '0.001',
            after_block: afterBlock,
            secret_id: secret,
            callback: receiver.url,
          }),
        })
        await res.arrayBuffer()
        if (res.status !== 201) throw new Error(`payment create answered ${res.status}`)
        receiver.expected.add(secret)
      } finally {
        // Sent also when the create failed: the payer's later nonces must not wait behind a gap.
        await anvil.rpc('eth_sendTransaction', [
          { from: payer.address, to: payee, value: '0x38d7ea4c68000', nonce: `0x${nonce.toString(16)}` },
        ])
      }
    })
    payerQueues[index] = done.catch(() => {})
    return done
  }

  // --- the soak: due requests started every 20 ms, memory sampled every SAMPLE_SECONDS ---------------------
  const kinds = { create: { rate: CREATES, run: createPending }, read: { rate: READS, run: read }, payment: { rate: PAYMENTS, run: pay } }
  const counts = Object.fromEntries(
    Object.keys(kinds).map((kind) => [kind, { started: 0, ok: 0, failed: 0, skipped: 0, lastError: '' }]),
  ) as Record<keyof typeof kinds, { started: number; ok: number; failed: number; skipped: number; lastError: string }>
  let inFlight = 0
  await sample('start', 0)
  const start = performance.now()
  const end = start + SECONDS * 1000
  let nextSample = SAMPLE_SECONDS
  const launching = new Set<Promise<void>>()
  while (performance.now() < end) {
    const elapsed = (performance.now() - start) / 1000
    for (const [kind, { rate, run }] of Object.entries(kinds) as [keyof typeof kinds, (typeof kinds)[keyof typeof kinds]][]) {
      const count = counts[kind]
      const due = Math.floor(elapsed * rate)
      while (count.started + count.skipped < due) {
        if (inFlight >= MAX_IN_FLIGHT) {
          count.skipped++
          continue
        }
        count.started++
        inFlight++
        const request = run()
          .then(
            () => void count.ok++,
            (error: Error) => {
              count.failed++
              count.lastError = error.message
            },
          )
          .finally(() => {
            inFlight--
            launching.delete(request)
          })
        launching.add(request)
      }
    }
    if (elapsed >= nextSample) {
      await sample('soak', elapsed)
      nextSample += SAMPLE_SECONDS
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const soakSeconds = (performance.now() - start) / 1000
  await Promise.all(launching)
  // The last payments' blocks are mined within a second; their callbacks follow.
  const settle = performance.now() + 20_000
  while (receiver.completed() < receiver.expected.size && performance.now() < settle)
    await new Promise((resolve) => setTimeout(resolve, 200))
  await sample('end', (performance.now() - start) / 1000)
  const smaps = readFileSync(`/proc/${service.pid}/smaps_rollup`, 'utf8')
  if (process.env.BENCH_HEAP_SNAPSHOT) {
    const { written } = await askChild<{ written: string }>(service, { snapshot: process.env.BENCH_HEAP_SNAPSHOT })
    console.log(`heap snapshot of the service: ${written}`)
  }
  const threads = readFileSync(`/proc/${service.pid}/status`, 'utf8').match(/^Threads:\s+(\d+)/m)?.[1]

  // --- report ----------------------------------------------------------------------------------------------
  console.log()
  console.log(
    `achieved over ${soakSeconds.toFixed(0)} s: ` +
      Object.entries(counts)
        .map(
          ([kind, c]) =>
            `${kind}s ${(c.ok / soakSeconds).toFixed(1)}/s (${c.ok} ok, ${c.failed} failed, ${c.skipped} skipped${c.lastError ? `; last error: ${c.lastError}` : ''})`,
        )
        .join(', '),
  )
  console.log(
    `payments completed (success callback received): ${receiver.completed()} of ${receiver.expected.size}; callbacks received ${receiver.received}`,
  )
  console.log()
  // Resident V8 heap (total_physical_size) out of the anonymous RSS; the rest of it is native: malloc
  // (Buffers, OpenSSL, pg/undici/libuv), thread stacks, V8's own allocations and compiled code.
  console.log(
    '| t s | phase | trackings | RSS MB | anon MB | file MB | V8 heap resident MB | heap used MB | heap total MB | new space MB | old space MB | external MB | arrayBuffers MB | native (anon − V8 heap) MB | GC ms/s |',
  )
  console.log('|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
  for (const [i, s] of samples.entries()) {
    const before = samples[i - 1]
    const gcLoad = before && s.at > before.at ? ((s.gc.ms - before.gc.ms) / (s.at - before.at)).toFixed(0) : ''
    const space = (name: string) => mb(s.spaces.find((x) => x.space_name === name)?.space_size ?? 0)
    console.log(
      `| ${Math.round(s.at)} | ${s.phase} | ${s.pending} | ${mb(s.rss.total)} | ${mb(s.rss.anon)} | ${mb(s.rss.file)} | ${mb(s.heap.total_physical_size)} | ${mb(s.usage.heapUsed)} | ${mb(s.usage.heapTotal)} | ` +
        `${space('new_space')} | ${space('old_space')} | ${mb(s.usage.external)} | ${mb(s.usage.arrayBuffers)} | ${mb(s.rss.anon - s.heap.total_physical_size)} | ${gcLoad} |`,
    )
  }
  const soakSamples = samples.filter((s) => s.phase === 'soak' || s.phase === 'end')
  const peak = soakSamples.reduce((a, b) => (b.rss.total > a.rss.total ? b : a))
  const final = samples.at(-1)!
  const heapFloor = Math.min(...soakSamples.map((s) => s.usage.heapUsed))
  console.log()
  console.log(
    `RSS: seeded ${mb(samples[0]!.rss.total)} MB, start ${mb(samples[1]!.rss.total)} MB, peak ${mb(peak.rss.total)} MB (at ${Math.round(peak.at)} s), final ${mb(final.rss.total)} MB (target ≤ 250 MB) ${peak.rss.total <= 250 * MB ? 'OK' : 'ABOVE'}`,
  )
  const soakGc = { count: final.gc.count - samples[1]!.gc.count, ms: final.gc.ms - samples[1]!.gc.ms }
  console.log(
    `garbage collection during the soak: ${soakGc.count} collections, ${(soakGc.ms / (final.at - samples[1]!.at)).toFixed(1)} ms of main-thread time per second`,
  )
  console.log(
    `heap used: floor ${mb(heapFloor)} MB, peak ${mb(Math.max(...soakSamples.map((s) => s.usage.heapUsed)))} MB, final ${mb(final.usage.heapUsed)} MB; threads ${threads}`,
  )
  console.log(
    `service smaps_rollup: ${smaps
      .split('\n')
      .filter((line) => /^(Rss|Pss_Anon|Pss_File|Anonymous|Shared_Clean|Private_Clean|Private_Dirty):/.test(line))
      .map((line) => line.replace(/\s+/g, ' '))
      .join(', ')}`,
  )
}

/**
 * `count` copies of the tracking `secret`, as pending trackings of other senders: secret ids
 * soak-2, soak-3, …; every other column as the API wrote it.
 */
async function copyTracking(databaseUrl: string, secret: string, count: number): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const { rows } = await client.query<{ name: string }>(
      `SELECT column_name AS name FROM information_schema.columns WHERE table_name = 'trackings' AND table_schema = current_schema() ORDER BY ordinal_position`,
    )
    const varied: Record<string, string> = {
      id: 'gen_random_uuid()::text',
      secret_id: `'soak-' || (g + 1)`,
      nonce: 'g + 1',
      sender: `'0x' || substr(md5('s' || g), 1, 32) || substr(md5('t' || g), 1, 8)`,
      receiver: `'0x' || substr(md5('r' || g), 1, 32) || substr(md5('q' || g), 1, 8)`,
    }
    const columns = rows.map((row) => row.name)
    const select = columns.map((name) => varied[name] ?? `t.${name}`)
    await client.query(
      `INSERT INTO trackings (${columns.join(', ')}) SELECT ${select.join(', ')}
      FROM trackings t, generate_series(1, $2::int) AS g WHERE t.secret_id = $1`,
      [secret, count],
    )
    // They stand for trackings followed long since: no check against the chain is owed to them (migration 0039).
    await client.query('DELETE FROM owed_checks')
    await client.query('ANALYZE trackings')
  } finally {
    await client.end()
  }
}

/** The callback receiver: answers 200 at once and notes which registered payments completed. */
function startReceiver(): Promise<{ url: string; expected: Set<string>; received: number; completed(): number; close(): void }> {
  const expected = new Set<string>()
  const succeeded = new Set<string>()
  const state = { received: 0 }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      state.received++
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { secret_id?: string; status?: string }
        if (body.status === 'success' && body.secret_id) succeeded.add(body.secret_id)
      } catch {
        // not a record: counted as received only
      }
      res.writeHead(200, { 'content-length': '0' }).end()
    })
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as { port: number }).port}/callback`,
        expected,
        get received() {
          return state.received
        },
        completed: () => [...expected].filter((secret) => succeeded.has(secret)).length,
        close: () => void server.close(),
      }),
    ),
  )
}

function residentOf(pid: number): Rss {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))![1]) * 1024
  return { total: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') + kb('RssShmem') }
}
const mb = (bytes: number) => (bytes / MB).toFixed(0)

let finishing: Promise<void> | undefined
/** Stops the service and Anvil and drops the scratch database, once (also on Ctrl-C). */
const finish = () =>
  (finishing ??= (async () => {
    await stopChildren(children)
    for (const fn of cleanups.reverse()) await fn()
  })())
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void finish().finally(() => process.exit(130)))
try {
  await main()
} finally {
  await finish()
}
