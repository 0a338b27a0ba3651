// npm run bench:callbacks — signed callback delivery against a local receiver answering 200.
//
// 1. Raw async RSA-PSS signing rate of this machine (node:crypto on the libuv pool, every core busy),
//    measured before and after the delivery run, with the same key and the same body size.
// 2. Throughput: N completed payments are due at once; the delivery worker claims, signs, POSTs and
//    records them (release included). Signed callbacks/s, and due → received p50/p99 of that burst.
// 3. Latency: completions written one by one (completeTracking + the `completed` event, as the chain
//    engine does) at an eighth of the measured throughput (at most 100/s: on the embedded database the
//    completions themselves share its one thread); due → received p50/p99 without a backlog.
// The receiver runs in a worker thread (its own event loop, the same two cores).
// BENCH_N (default 20,000: a run of several seconds, steadier than a short burst) sets N; DATABASE_URL runs it on PostgreSQL, else on the embedded database.
// 5. The webhook platform (bench/webhook-platform.ts): callbacks/s with and without the Standard Webhooks HMAC,
//    and one dead endpoint among 100 healthy ones (healthy deliveries/s, due → received p99, with and without).
// BENCH_MARK=1 writes a line with the pid to stderr when the throughput run starts (to attach `perf record -p`).
import { randomBytes, randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { Worker } from 'node:worker_threads'
import { asciiJson } from '../src/domain/ascii-json.ts'
import { type Tracking } from '../src/domain/tracking.ts'
import { fullRecord } from '../src/domain/records.ts'
import { generateRsaKeyPair, parseRsaPrivateKey } from '../src/callbacks/signer.ts'
import { completeTracking } from '../src/store/complete-tracking.ts'
import type { Db } from '../src/store/infrastructure/database.ts'
import { insertTracking } from '../src/store/trackings.ts'
import { startTestService } from '../test/support/service.ts'
import { machineCpu, postgresCpuMs, postgresCpuSince, readStat } from './proc-cpu.ts'
import { rawSigningRate as measureRawSigning } from './raw-signing.ts'
import { webhookPlatformFigures } from './webhook-platform.ts'

const N = Number(process.env.BENCH_N ?? 20_000)
const LATENCY_SECONDS = 3

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
}
const fmt = (n: number) => Math.round(n).toLocaleString('en-US')

/** CPU seconds per kind of thread of this process (Linux /proc): where a callback's cost goes. */
async function threadCpu(): Promise<Map<string, number>> {
  const { readdirSync } = await import('node:fs')
  const seconds = new Map<string, number>()
  let tasks: string[] = []
  try {
    tasks = readdirSync('/proc/self/task')
  } catch {
    // not Linux: no breakdown
  }
  for (const task of tasks) {
    const stat = readStat(`/proc/self/task/${task}/stat`)
    if (!stat) continue
    const kind =
      stat.name === 'MainThread'
        ? 'main'
        : stat.name === 'libuv-worker'
          ? 'libuv pool (signing)'
          : stat.name === 'WorkerThread'
            ? 'receiver'
            : 'V8/other'
    seconds.set(kind, (seconds.get(kind) ?? 0) + stat.cpuMs / 1000)
  }
  return seconds
}

/** BENCH_PROFILE=file.cpuprofile: a CPU profile of the main thread during the throughput run. */
async function startProfile(): Promise<(file: string) => Promise<void>> {
  const { Session } = await import('node:inspector/promises')
  const { writeFileSync } = await import('node:fs')
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.start')
  return async (file) => {
    const { profile } = await session.post('Profiler.stop')
    writeFileSync(file, JSON.stringify(profile))
    session.disconnect()
  }
}

// --- receiver in a worker thread: answers 200 at once, notes when each delivery id arrived ------------
const receiverSource = `
const { parentPort } = require('node:worker_threads')
const http = require('node:http')
const arrivals = new Map()
const bySecret = new Map()
let trackSecrets = false
const server = http.createServer({ keepAliveTimeout: 60000 }, (req, res) => {
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', () => {
    const id = req.headers['x-delivery-id']
    if (!arrivals.has(id)) arrivals.set(id, Date.now())
    if (trackSecrets) {
      try { bySecret.set(JSON.parse(Buffer.concat(chunks).toString()).secret_id, Date.now()) } catch {}
    }
    res.writeHead(200, { 'content-length': '0' })
    res.end()
  })
})
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }))
parentPort.on('message', (message) => {
  if (message === 'count') parentPort.postMessage({ count: arrivals.size })
  if (message === 'report') parentPort.postMessage({ arrivals: [...arrivals] })
  if (message === 'secrets') parentPort.postMessage({ secrets: [...bySecret] })
  if (message === 'track-secrets') { trackSecrets = true; parentPort.postMessage({ tracking: true }) }
  if (message === 'reset') { arrivals.clear(); bySecret.clear(); parentPort.postMessage({ reset: true }) }
})
`
const receiver = new Worker(receiverSource, { eval: true })
const ask = <T>(message: string): Promise<T> => new Promise((resolve) => receiver.once('message', resolve).postMessage(message))
const { port } = await new Promise<{ port: number }>((resolve) => receiver.once('message', resolve))
const callback = `http://127.0.0.1:${port}/callback`

async function waitForArrivals(count: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while ((await ask<{ count: number }>('count')).count < count) {
    if (Date.now() > deadline) throw new Error(`only ${(await ask<{ count: number }>('count')).count} of ${count} callbacks arrived`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

// --- service --------------------------------------------------------------------------------------------
const keys = await generateRsaKeyPair()
const service = await startTestService({
  env: { PAYWATCH_SIGNING_KEY: keys.privateKeyPem, LOG_LEVEL: 'warn' },
  background: false,
  callbacks: {
    perHost: Number(process.env.BENCH_PER_HOST ?? 32),
    ...(process.env.BENCH_SIGNING ? { signing: Number(process.env.BENCH_SIGNING) } : {}),
  },
})
const db = service.database.db
const { accountId } = await service.newAccount('bench')

// One shop receiving every payment, from a different sender each time (as in production).
const merchant = `0x${randomBytes(20).toString('hex')}`
const trackingFor = (now: Date): Tracking => ({
  id: randomUUID(),
  accountId,
  secretId: randomUUID(),
  shape: 'current',
  blockchain: 'ethereum',
  sender: `0x${randomBytes(20).toString('hex')}`,
  nonce: BigInt(Math.floor(Math.random() * 1e12)),
  receiver: merchant,
  token: '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee',
  decimals: 18,
  commitment: 'confirmed',
  confirmations: 1,
  afterBlock: 19_000_000n,
  deadline: null,
  nonceless: false,
  amount: '12.5',
  feeAmount: null,
  feeReceiver: null,
  transaction: `0x${randomBytes(32).toString('hex')}`,
  payload: { order: 'A-1001', customer: 'Zoë' },
  callback,
  forwardTo: 'https://shop.example/thanks',
  forwardOnFailure: false,
  integrationId: null,
  linkId: null,
  shop: null,
  shopifyPaymentId: null,
  status: 'pending',
  failedReason: null,
  release: false,
  confirmedAt: null,
  createdAt: now,
  updatedAt: now,
})

/** N completed trackings with their delivery rows, written in bulk (setup, not measured). */
async function seedCompleted(database: Db, count: number): Promise<void> {
  const now = new Date()
  for (let offset = 0; offset < count; offset += 500) {
    const batch = Array.from({ length: Math.min(500, count - offset) }, () => trackingFor(now))
    await database.transaction().execute(async (trx) => {
      await trx
        .insertInto('trackings')
        .values(
          batch.map((t) => ({
            id: t.id,
            account_id: t.accountId,
            secret_id: t.secretId,
            shape: t.shape,
            blockchain: t.blockchain,
            sender: t.sender,
            nonce: String(t.nonce),
            receiver: t.receiver,
            token: t.token,
            decimals: t.decimals,
            commitment: t.commitment,
            confirmations: t.confirmations,
            after_block: t.afterBlock.toString(),
            amount: t.amount,
            transaction: t.transaction,
            payload: JSON.stringify(t.payload),
            callback: t.callback,
            forward_to: t.forwardTo,
            forward_on_failure: false,
            fee_amount: null,
            fee_receiver: null,
            integration_id: null,
            link_id: null,
            shop: null,
            shopify_payment_id: null,
            status: 'success',
            failed_reason: null,
            confirmed_at: now,
            created_at: now,
            updated_at: now,
          })),
        )
        .execute()
      await trx
        .insertInto('deliveries')
        .values(
          batch.map((t) => ({
            id: randomUUID(),
            tracking_id: t.id,
            reason: 'completed' as const,
            next_attempt_at: now,
            due_at: now,
            created_at: now,
            updated_at: now,
          })),
        )
        .execute()
    })
  }
}

// --- 1. raw signing rate ------------------------------------------------------------------------------------
const signingKey = parseRsaPrivateKey(keys.privateKeyPem, 'bench key')
const sampleBody = Buffer.from(asciiJson(fullRecord({ ...trackingFor(new Date()), status: 'success', confirmedAt: new Date() })))
const rawSigningRate = (count: number) => measureRawSigning(signingKey, sampleBody, count)
await rawSigningRate(200) // warm-up
const mainBeforeRaw = (await threadCpu()).get('main') ?? 0
const rawBefore = await rawSigningRate(N)
// Off the event loop: what one signature costs the main thread (the RSA work runs on the libuv pool).
const mainPerSign = ((((await threadCpu()).get('main') ?? 0) - mainBeforeRaw) / N) * 1000

// --- 2. throughput ----------------------------------------------------------------------------------------------
await seedCompleted(db, N)
if (process.env.BENCH_MARK) console.error(`throughput run starts (pid ${process.pid})`)
const dueAt = new Date()
await db.updateTable('deliveries').set({ next_attempt_at: dueAt, due_at: dueAt }).execute()
const profiler = process.env.BENCH_PROFILE ? await startProfile() : undefined
const started = performance.now()
const cpuBefore = process.cpuUsage()
const threadsBefore = await threadCpu()
const machineBefore = machineCpu()
const postgresBefore = postgresCpuMs()
const eluBefore = performance.eventLoopUtilization()
await service.callbacks.start()
service.common.shutdown.add(service.callbacks.name, () => service.callbacks.stop())
await waitForArrivals(N, 600_000)
const receivedAll = performance.now()
for (;;) {
  const row = await db
    .selectFrom('deliveries')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('state', '=', 'delivered')
    .executeTakeFirstOrThrow()
  if (Number(row.n) >= N) break
  await new Promise((resolve) => setTimeout(resolve, 5))
}
const recordedAll = performance.now()
const cpu = process.cpuUsage(cpuBefore)
const threadsAfter = await threadCpu()
const machineAfter = machineCpu()
const postgresSpent = postgresCpuSince(postgresBefore)
const perThread = [...threadsAfter]
  .map(([kind, seconds]) => `${kind} ${(seconds - (threadsBefore.get(kind) ?? 0)).toFixed(2)} s`)
  .join(', ')
if (profiler) await profiler(process.env.BENCH_PROFILE!)
const elu = performance.eventLoopUtilization(eluBefore)
const burst = (await ask<{ arrivals: [string, number][] }>('report')).arrivals.map(([, at]) => at - dueAt.getTime())
const released = await db
  .selectFrom('trackings')
  .select((eb) => eb.fn.countAll<string>().as('n'))
  .where('release', '=', true)
  .executeTakeFirstOrThrow()
const rawAfter = await rawSigningRate(N)
const rate = N / ((receivedAll - started) / 1000)
const rateRecorded = N / ((recordedAll - started) / 1000)
const raw = (rawBefore + rawAfter) / 2

// --- 3. latency without a backlog ----------------------------------------------------------------------------------
await ask('reset')
const steadyRate = Math.max(10, Math.min(100, Math.floor(rate / 8)))
const steadyCount = steadyRate * LATENCY_SECONDS
const dueTimes = new Map<string, number>()
const pending: Tracking[] = []
for (let i = 0; i < steadyCount; i++) pending.push((await insertTracking(db, trackingFor(new Date())))!)
const interval = 1000 / steadyRate
const steadyStart = performance.now()
for (let i = 0; i < steadyCount; i++) {
  const wait = steadyStart + i * interval - performance.now()
  if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait))
  const now = new Date()
  const completed = await completeTracking(db, pending[i]!.id, { status: 'success', transaction: pending[i]!.transaction! }, now)
  if (completed) {
    dueTimes.set(completed.id, now.getTime())
    service.events.emit('completed', completed)
  }
}
await waitForArrivals(steadyCount, 60_000)
const deliveryIds = await db
  .selectFrom('deliveries')
  .select(['id', 'tracking_id'])
  .where('tracking_id', 'in', [...dueTimes.keys()])
  .execute()
const trackingOf = new Map(deliveryIds.map((d) => [d.id, d.tracking_id]))
const steady = (await ask<{ arrivals: [string, number][] }>('report')).arrivals
  .filter(([id]) => trackingOf.has(id))
  .map(([id, at]) => at - dueTimes.get(trackingOf.get(id)!)!)

await service.close()

// --- 4. on Anvil: block mined → callback received, through the chain engine --------------------------------------
await ask('reset')
await ask('track-secrets')
const anvilLatency = await minedToReceived(Number(process.env.BENCH_ANVIL_PAYMENTS ?? 50))
await receiver.terminate()
const webhookLines = await webhookPlatformFigures()

console.log(
  `\nbench:callbacks — ${service.database.kind}, N = ${fmt(N)}, ${(await import('node:os')).availableParallelism()} cores, UV_THREADPOOL_SIZE ${process.env.UV_THREADPOOL_SIZE ?? '4 (default)'}`,
)
console.log(
  `raw async RSA-PSS signing:          ${fmt(rawBefore)}/s before, ${fmt(rawAfter)}/s after (mean ${fmt(raw)}/s); main thread ${mainPerSign.toFixed(3)} ms CPU per signature`,
)
console.log(`signed callbacks (received):        ${fmt(rate)}/s  (${((receivedAll - started) / 1000).toFixed(2)} s for ${fmt(N)})`)
console.log(`signed callbacks (recorded+released): ${fmt(rateRecorded)}/s  (${released.n} released)`)
console.log(`ratio to raw signing:               ${((rate / raw) * 100).toFixed(1)} %  (target ≥ 75 %; target rate ≥ 2,000/s)`)
console.log(
  `CPU while delivering:                ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s process (all threads) in ${((recordedAll - started) / 1000).toFixed(2)} s; main event loop ${(elu.utilization * 100).toFixed(0)} % busy`,
)
console.log(`  by thread:                        ${perThread}`)
if (service.database.kind === 'postgres') console.log(`  PostgreSQL server:                ${(postgresSpent / 1000).toFixed(2)} s`)
if (machineBefore && machineAfter) {
  const perCallback = (ms: number) => (ms / N).toFixed(3)
  console.log(
    `  machine, ms per callback (all cores): busy ${perCallback(machineAfter.busy - machineBefore.busy)}, idle ${perCallback(machineAfter.idle - machineBefore.idle)}`,
  )
}
console.log(
  `burst due → received:               p50 ${fmt(percentile(burst, 50))} ms, p99 ${fmt(percentile(burst, 99))} ms (all ${fmt(N)} due at once)`,
)
console.log(
  `Anvil: block mined → callback received: p50 ${percentile(anvilLatency, 50).toFixed(1)} ms, p99 ${percentile(anvilLatency, 99).toFixed(1)} ms (${anvilLatency.length} payments, newHeads over WebSocket; target < 250 ms / < 1 s)`,
)
console.log(
  `steady due → received at ${fmt(steadyRate)}/s:  p50 ${percentile(steady, 50).toFixed(1)} ms, p99 ${percentile(steady, 99).toFixed(1)} ms (${steady.length} completions)`,
)

for (const line of webhookLines) console.log(line)

/**
 * Payments registered through the API (traces, native currency), then paid one at a time on Anvil
 * (automine: the block is mined when the transaction is sent); the time from that moment to the
 * callback's arrival at the receiver.
 */
async function minedToReceived(count: number): Promise<number[]> {
  const { startAnvil } = await import('../test/support/index.ts')
  const anvil = await startAnvil()
  const chained = await startTestService({
    env: { LOG_LEVEL: 'warn', PAYWATCH_RATE_RPS: '100000', PAYWATCH_RATE_PARALLEL: '1000' },
    // Requests over HTTP, newHeads over WebSocket: Anvil's WebSocket answers to parallel requests
    // can wait ~40 ms each on TCP delayed ACKs (its socket does not set TCP_NODELAY).
    chains: { ethereum: { rpc: [anvil.rpcUrl, anvil.wsUrl], chainId: anvil.chainId } },
  })
  try {
    const { apiKey } = await chained.newAccount('anvil bench')
    const sender = anvil.accounts[1]!
    const receiverAddress = anvil.accounts[3]!.address
    const first = await anvil.publicClient.getTransactionCount({ address: sender.address })
    const afterBlock = await anvil.publicClient.getBlockNumber()
    const secrets: string[] = []
    for (let i = 0; i < count; i++) {
      const secret = randomUUID()
      const res = await chained.api(apiKey, {
        method: 'POST',
        url: '/v2/payments',
        payload: {
          blockchain: 'ethereum',
          sender: sender.address,
          nonce: first + i,
          receiver: receiverAddress,
          token: '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE',
          amount: '0.001',
          after_block: String(afterBlock),
          secret_id: secret,
          callback,
        },
      })
      if (res.statusCode !== 201) throw new Error(`create: ${res.statusCode} ${res.body}`)
      secrets.push(secret)
    }
    const mined = new Map<string, number>()
    for (let i = 0; i < count; i++) {
      await sender.wallet.sendTransaction({ to: receiverAddress as `0x${string}`, value: 10n ** 15n, nonce: first + i })
      mined.set(secrets[i]!, Date.now())
      // One payment at a time: the latency of each, not of a queue.
      const deadline = Date.now() + 10_000
      while (!(await ask<{ secrets: [string, number][] }>('secrets')).secrets.some(([secret]) => secret === secrets[i])) {
        if (Date.now() > deadline) throw new Error(`no callback for payment ${i}`)
        await new Promise((resolve) => setTimeout(resolve, 1))
      }
    }
    const arrived = new Map((await ask<{ secrets: [string, number][] }>('secrets')).secrets)
    return secrets.map((secret) => arrived.get(secret)! - mined.get(secret)!)
  } finally {
    await chained.close()
    await anvil.stop()
  }
}
