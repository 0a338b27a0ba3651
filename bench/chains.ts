// npm run bench:chains — ten chains followed by one node: ten local Anvil nodes, the first mining 4
// blocks a second of ~200 transactions each (driven by this script), the others mining on their own
// every 2–12 s with a few transactions. BENCH_PENDING (default 10,000) pending trackings per chain,
// inserted in bulk; BENCH_SECONDS (default 60) of following, then the engine stops and the nodes are
// stopped. Printed: per chain the blocks processed, transactions per block, processing p50/p99 (from
// the block read to every judgement written; target p50 < 50 ms), and the process's RSS.
// Embedded database unless DATABASE_URL is set. Every request goes to 127.0.0.1.
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { sql } from 'kysely'
import type { Address } from 'viem'
import type { BlockProcessed } from '../src/engine/chain-processor.ts'
import { createChainEngine } from '../src/engine/chain-engine.ts'
import { startAnvil, type Anvil } from '../test/support/index.ts'
import { startTestService } from '../test/support/service.ts'
import { forgetOwedChecks } from './bulk-pending.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 60)
const PENDING = Number(process.env.BENCH_PENDING ?? 10_000)
const CHAINS = 10
const FAST_TXS = 200
const FAST_INTERVAL_MS = 250
/** Block times of the slower chains, in seconds. */
const SLOW_BLOCK_TIMES = [2, 2, 3, 3, 5, 5, 12, 12, 12]
const NATIVE = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee'

const percentile = (values: number[], p: number) => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}
const fresh = (): Address => `0x${randomBytes(20).toString('hex')}`
const names = Array.from({ length: CHAINS }, (_, i) => `chain${i}`)

let rpcId = 0
async function batch(anvil: Anvil, calls: { method: string; params: unknown[] }[]): Promise<void> {
  const response = await fetch(anvil.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(calls.map((call) => ({ jsonrpc: '2.0', id: ++rpcId, ...call }))),
  })
  const answers = (await response.json()) as { error?: { message: string } }[]
  const failed = answers.find((answer) => answer.error)
  if (failed) throw new Error(failed.error!.message)
}

const anvils = await Promise.all(
  names.map((_, i) =>
    startAnvil({
      chainId: 31_337 + i,
      ...(i === 0 ? { noMining: true } : { blockTime: SLOW_BLOCK_TIMES[i - 1]! }),
      extraArgs: ['--auto-impersonate', '--gas-limit', '100000000'],
    }),
  ),
)
const service = await startTestService({
  background: false,
  chains: Object.fromEntries(
    names.map((name, i) => [
      name,
      { rpc: [anvils[i]!.rpcUrl, anvils[i]!.wsUrl], chainId: anvils[i]!.chainId, pollingIntervalMs: 60_000, maxHeadAgeSeconds: null },
    ]),
  ),
})
const timers: NodeJS.Timeout[] = []
try {
  const { accountId } = await service.newAccount('bench')
  for (const name of names) {
    await sql`
      INSERT INTO trackings (id, account_id, secret_id, shape, blockchain, sender, nonce, receiver, token, decimals,
        commitment, confirmations, after_block, amount, transaction, status, created_at, updated_at)
      SELECT md5('id' || g || ${name}), ${accountId}, md5('secret' || g || ${name}), 'current', ${name},
        '0x' || substr(md5('s' || g || ${name}), 1, 32) || substr(md5('t' || g), 1, 8), g % 100,
        '0x' || substr(md5('r' || g), 1, 32) || substr(md5('q' || g), 1, 8), ${NATIVE}, 18, 'confirmed', 1, 0, '1',
        CASE WHEN g % 2 = 0 THEN '0x' || md5('h' || g || ${name}) || md5('k' || g) END, 'pending', now(), now()
      FROM generate_series(1, ${PENDING}::int) AS g`.execute(service.database.db)
    await forgetOwedChecks(service.database.db)
  }
  await sql`ANALYZE trackings`.execute(service.database.db)

  // The fast chain's senders, funded once; each block has one transaction of each.
  const fast = anvils[0]!
  const senders = Array.from({ length: FAST_TXS }, fresh)
  await batch(
    fast,
    senders.map((address) => ({ method: 'anvil_setBalance', params: [address, '0x3635c9adc5dea00000'] })),
  )
  await fast.rpc('evm_mine')

  const processed = new Map<string, BlockProcessed[]>(names.map((name) => [name, []]))
  let measuring = false
  const engine = createChainEngine(
    service.common,
    { database: service.database, chains: service.chains, events: service.events, fallbackReadiness: async () => [] },
    { onBlockProcessed: (info) => void (measuring && processed.get(info.chain)!.push(info)) },
  )
  await engine.start()
  while (names.some((name) => engine.runner(name)?.follower?.state.head === undefined))
    await new Promise((resolve) => setTimeout(resolve, 20))
  console.log(
    `bench:chains — database: ${service.database.kind}; ${CHAINS} chains, ${PENDING.toLocaleString('en')} pending each; ` +
      `${SECONDS} s; RSS with the chains followed: ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MB`,
  )

  // The slower chains: a few transfers now and then (their nodes mine on their own).
  for (const [i, anvil] of anvils.entries()) {
    if (i === 0) continue
    const from = anvil.accounts[1]!.address
    timers.push(
      setInterval(() => {
        const calls = Array.from({ length: 5 }, () => ({
          method: 'eth_sendTransaction',
          params: [{ from, to: fresh(), value: '0x1' }],
        }))
        batch(anvil, calls).catch(() => {})
      }, 1_000),
    )
  }

  // The fast chain: 200 transactions then a block, every 250 ms (later when the node is slower).
  measuring = true
  const started = performance.now()
  const end = started + SECONDS * 1000
  let nonce = 0
  let fastBlocks = 0
  let rssPeak = 0
  while (performance.now() < end) {
    const due = started + fastBlocks * FAST_INTERVAL_MS
    const wait = due - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    await batch(
      fast,
      senders.map((from) => ({
        method: 'eth_sendTransaction',
        params: [{ from, to: fresh(), value: '0x1', nonce: `0x${nonce.toString(16)}` }],
      })),
    )
    await fast.rpc('evm_mine')
    nonce++
    fastBlocks++
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss)
  }
  const seconds = (performance.now() - started) / 1000
  measuring = false
  for (const timer of timers) clearInterval(timer)
  await engine.stop()

  const header = ['chain', 'block time', 'blocks processed', 'transactions/block', 'processing p50 ms', 'p99 ms']
  console.log()
  console.log(`| ${header.join(' | ')} |`)
  console.log(`|${header.map(() => '---').join('|')}|`)
  for (const [i, name] of names.entries()) {
    const blocks = processed.get(name)!
    const transactions = blocks.reduce((sum, b) => sum + b.transactions, 0) / Math.max(1, blocks.length)
    const times = blocks.map((b) => b.ms)
    console.log(
      `| ${name} | ${i === 0 ? `${FAST_INTERVAL_MS} ms` : `${SLOW_BLOCK_TIMES[i - 1]} s`} | ${blocks.length} | ${transactions.toFixed(0)} | ` +
        `${percentile(times, 50).toFixed(1)} | ${percentile(times, 99).toFixed(1)} |`,
    )
  }
  const all = [...processed.values()].flat().map((b) => b.ms)
  console.log()
  console.log(
    `fast chain: ${fastBlocks} blocks mined in ${seconds.toFixed(1)} s (${(fastBlocks / seconds).toFixed(2)} blocks/s, target 4); ` +
      `all chains: processing p50 ${percentile(all, 50).toFixed(1)} ms, p99 ${percentile(all, 99).toFixed(1)} ms (target p50 < 50 ms); ` +
      `RSS peak ${(rssPeak / 2 ** 20).toFixed(0)} MB, end ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MB`,
  )
} finally {
  for (const timer of timers) clearInterval(timer)
  await service.close()
  await Promise.all(anvils.map((anvil) => anvil.stop()))
}
