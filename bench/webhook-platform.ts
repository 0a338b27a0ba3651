// Part of npm run bench:callbacks — the webhook platform's costs, measured in one run:
// 1. Standard Webhooks HMAC: callbacks/s of two services side by side, one signing with the HMAC headers and
//    one without, in alternating rounds (same machine state), and the drop between them (target ≤ 5 %).
// 2. One dead endpoint (accepts and never answers) among 100 healthy ones: healthy deliveries/s and due →
//    received p50/p99 of a burst to the 100 healthy endpoints, with and without the dead one's backlog.
// The receivers run in a worker thread. BENCH_HMAC_ROUNDS / BENCH_HMAC_N / BENCH_HEALTHY_N / BENCH_DEAD_N size it.
import { randomBytes, randomUUID } from 'node:crypto'
import { Worker } from 'node:worker_threads'
import type { Db } from '../src/store/infrastructure/database.ts'
import { startTestService, type TestService } from '../test/support/service.ts'

const receiverSource = `
const { parentPort, workerData } = require('node:worker_threads')
const http = require('node:http')
const arrivals = new Map()
const ports = []
let listening = 0
const total = workerData.healthy + 1
for (let i = 0; i < total; i++) {
  const dead = i === workerData.healthy
  const server = http.createServer({ keepAliveTimeout: 60000 }, (req, res) => {
    req.resume()
    req.on('end', () => {
      if (dead) return // accepted, never answered: each attempt ends at the callback timeout
      const id = req.headers['x-delivery-id']
      if (!arrivals.has(id)) arrivals.set(id, Date.now())
      res.writeHead(200, { 'content-length': '0' })
      res.end()
    })
  })
  server.listen(0, '127.0.0.1', () => {
    ports[i] = server.address().port
    if (++listening === total) parentPort.postMessage({ ports })
  })
}
parentPort.on('message', (message) => {
  if (message === 'count') parentPort.postMessage({ count: arrivals.size })
  if (message === 'report') parentPort.postMessage({ arrivals: [...arrivals] })
  if (message === 'reset') { arrivals.clear(); parentPort.postMessage({ reset: true }) }
})
`

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
}
const fmt = (n: number) => Math.round(n).toLocaleString('en-US')

/** `count` completed trackings of `accountId` to `callback`, with deliveries due at `dueAt` (bulk, not measured). */
async function seed(db: Db, accountId: string, callback: string, count: number, dueAt: Date): Promise<void> {
  for (let offset = 0; offset < count; offset += 500) {
    const size = Math.min(500, count - offset)
    const ids = Array.from({ length: size }, () => randomUUID())
    await db.transaction().execute(async (trx) => {
      await trx
        .insertInto('trackings')
        .values(
          ids.map((id) => ({
            id,
            account_id: accountId,
            secret_id: randomUUID(),
            shape: 'current' as const,
            blockchain: 'ethereum',
            sender: `0x${randomBytes(20).toString('hex')}`,
            nonce: String(Math.floor(Math.random() * 1e12)),
            receiver: `0x${'ab'.repeat(20)}`,
            token: '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee',
            decimals: 18,
            commitment: 'confirmed' as const,
            confirmations: 1,
            after_block: '19000000',
            amount: '12.5',
            transaction: `0x${randomBytes(32).toString('hex')}`,
            payload: JSON.stringify({ order: 'A-1001', customer: 'Zoë' }),
            callback,
            forward_on_failure: false,
            status: 'success' as const,
            confirmed_at: dueAt,
            created_at: dueAt,
            updated_at: dueAt,
          })),
        )
        .execute()
      await trx
        .insertInto('deliveries')
        .values(
          ids.map((id) => ({
            id: randomUUID(),
            tracking_id: id,
            reason: 'completed' as const,
            next_attempt_at: dueAt,
            due_at: dueAt,
            created_at: dueAt,
            updated_at: dueAt,
          })),
        )
        .execute()
    })
  }
}

export async function webhookPlatformFigures(): Promise<string[]> {
  const healthyEndpoints = 100
  const receiver = new Worker(receiverSource, { eval: true, workerData: { healthy: healthyEndpoints } })
  const ask = <T>(message: string): Promise<T> => new Promise((resolve) => receiver.once('message', resolve).postMessage(message))
  const { ports } = await new Promise<{ ports: number[] }>((resolve) => receiver.once('message', resolve))
  const waitForArrivals = async (count: number) => {
    const deadline = Date.now() + 600_000
    while ((await ask<{ count: number }>('count')).count < count) {
      if (Date.now() > deadline) throw new Error('callbacks did not arrive')
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  }
  const lines: string[] = []
  try {
    // --- 1. HMAC on and off, alternating rounds -------------------------------------------------------------
    const rounds = Number(process.env.BENCH_HMAC_ROUNDS ?? 4)
    const perRound = Number(process.env.BENCH_HMAC_N ?? 4000)
    const future = new Date(Date.now() + 86400_000)
    const services: Record<'with' | 'without', TestService> = {
      with: await startTestService({ env: { LOG_LEVEL: 'warn' }, background: false, callbacks: { perHost: 32 } }),
      without: await startTestService({
        env: { LOG_LEVEL: 'warn' },
        background: false,
        callbacks: { perHost: 32, standardWebhooks: false },
      }),
    }
    const seconds = { with: 0, without: 0 }
    try {
      for (const kind of ['with', 'without'] as const) {
        const { accountId } = await services[kind].newAccount('bench')
        await seed(services[kind].database.db, accountId, `http://127.0.0.1:${ports[0]}/cb`, perRound * (rounds + 1), future)
        await services[kind].callbacks.start()
        services[kind].common.shutdown.add('bench-callbacks', () => services[kind].callbacks.stop())
      }
      // Round 0 warms both up (JIT, connections) and is not counted.
      for (let round = 0; round <= rounds; round++) {
        for (const kind of round % 2 === 0 ? (['with', 'without'] as const) : (['without', 'with'] as const)) {
          const db = services[kind].database.db
          await ask('reset')
          const batch = await db.selectFrom('deliveries').select('id').where('next_attempt_at', '=', future).limit(perRound).execute()
          const started = performance.now()
          const now = new Date()
          await db
            .updateTable('deliveries')
            .set({ next_attempt_at: now, due_at: now })
            .where(
              'id',
              'in',
              batch.map((row) => row.id),
            )
            .execute()
          services[kind].callbacks.worker.wake()
          await waitForArrivals(perRound)
          if (round > 0) seconds[kind] += (performance.now() - started) / 1000
        }
      }
    } finally {
      await services.with.close()
      await services.without.close()
    }
    const withRate = (perRound * rounds) / seconds.with
    const withoutRate = (perRound * rounds) / seconds.without
    lines.push(
      `Standard Webhooks HMAC:             ${fmt(withRate)}/s with, ${fmt(withoutRate)}/s without (${rounds} alternating rounds of ${fmt(perRound)}); drop ${(((withoutRate - withRate) / withoutRate) * 100).toFixed(1)} % (target ≤ 5 %)`,
    )

    // --- 2. one dead endpoint among 100 healthy ones ------------------------------------------------------------
    const healthyN = Number(process.env.BENCH_HEALTHY_N ?? 5000)
    const deadN = Number(process.env.BENCH_DEAD_N ?? 1000)
    for (const withDead of [false, true]) {
      const service = await startTestService({ env: { LOG_LEVEL: 'warn', PAYWATCH_CALLBACK_TIMEOUT: '10' }, background: false })
      try {
        const db = service.database.db
        const due = new Date(Date.now() + 86400_000)
        for (let i = 0; i < healthyEndpoints; i++) {
          const { accountId } = await service.newAccount(`healthy ${i}`)
          await seed(db, accountId, `http://127.0.0.1:${ports[i]}/cb`, healthyN / healthyEndpoints, due)
        }
        if (withDead) {
          const { accountId } = await service.newAccount('dead')
          await seed(db, accountId, `http://127.0.0.1:${ports[healthyEndpoints]}/cb`, deadN, due)
        }
        await ask('reset')
        const dueAt = new Date()
        await db.updateTable('deliveries').set({ next_attempt_at: dueAt, due_at: dueAt }).execute()
        const started = performance.now()
        await service.callbacks.start()
        service.common.shutdown.add('bench-callbacks', () => service.callbacks.stop())
        await waitForArrivals(healthyN)
        const elapsed = (performance.now() - started) / 1000
        const latencies = (await ask<{ arrivals: [string, number][] }>('report')).arrivals.map(([, at]) => at - dueAt.getTime())
        lines.push(
          `100 healthy endpoints ${withDead ? `+ 1 dead (${fmt(deadN)} due, never answers)` : 'alone                          '}: ${fmt(healthyN / elapsed)} healthy deliveries/s; due → received p50 ${fmt(percentile(latencies, 50))} ms, p99 ${fmt(percentile(latencies, 99))} ms (${fmt(healthyN)} due at once)`,
        )
      } finally {
        await service.close()
      }
    }
  } finally {
    await receiver.terminate()
  }
  return lines
}

// Run alone: node bench/webhook-platform.ts
if (import.meta.url === `file://${process.argv[1]}`) for (const line of await webhookPlatformFigures()) console.log(line)
