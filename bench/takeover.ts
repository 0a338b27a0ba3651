// How long a chain goes unfollowed when its node fails: two `paywatch serve` processes on one
// PostgreSQL database and one Anvil (a block a second); the leading node is killed (SIGKILL), frozen
// (SIGSTOP, woken again afterwards) or stopped (SIGTERM), five times each, and the time from the
// signal to the other node holding the chain's lease is measured. Prints p50 and max per signal.
//
// Options (environment): DATABASE_URL (server to create a scratch database on; default local),
// BENCH_ROUNDS (default 5).
import { setTimeout as sleep } from 'node:timers/promises'

process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres'
const rounds = Number(process.env.BENCH_ROUNDS ?? 5)

const { startAnvil } = await import('../test/support/anvil.ts')
const { createFreshDatabaseUrl, dropDatabase } = await import('../test/support/database.ts')
const { startCluster } = await import('../test/support/node-cluster.ts')
const { openDatabase } = await import('../src/store/infrastructure/database.ts')
const { migrate } = await import('../src/store/infrastructure/migrate.ts')

const anvil = await startAnvil({ blockTime: 1 })
const url = (await createFreshDatabaseUrl())!
const database = await openDatabase({ databaseUrl: url, dataDir: 'memory://' })
await migrate(database.db)
await database.close()
const cluster = await startCluster(url, anvil)
let started = 0
const live = () => cluster.nodes.filter((n) => n.child.exitCode === null && n.child.signalCode === null)

const leader = async (timeoutMs: number, not?: unknown) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const node = (await cluster.leader())?.node
    if (node && node !== not) return node
    if (Date.now() > deadline) throw new Error('no node took the chain')
    await sleep(10)
  }
}

const results: Record<string, number[]> = { SIGKILL: [], SIGSTOP: [], SIGTERM: [] }
try {
  for (let round = 0; round < rounds; round++) {
    for (const signal of ['SIGKILL', 'SIGSTOP', 'SIGTERM'] as const) {
      while (live().length < 2) await cluster.start(`node-${++started}`)
      const current = await leader(30_000)
      // The standby is up and polling; the leader has followed for a moment.
      await sleep(1_500)
      current.child.kill(signal)
      const at = performance.now()
      await leader(30_000, current)
      const ms = performance.now() - at
      results[signal]!.push(ms)
      console.log(`round ${round + 1} ${signal}: ${Math.round(ms)} ms`)
      if (signal === 'SIGSTOP') current.child.kill('SIGCONT')
      else await current.exited
    }
  }
} finally {
  await cluster.close()
  await dropDatabase(url)
  await anvil.stop()
}

const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!
console.log('\nchain take-over after the leading node fails (ms from the signal to the other node holding the lease)')
for (const [signal, values] of Object.entries(results)) {
  console.log(
    `${signal.padEnd(8)} p50 ${Math.round(p50(values)).toString().padStart(6)}  max ${Math.round(Math.max(...values))
      .toString()
      .padStart(6)}  (n=${values.length})`,
  )
}
