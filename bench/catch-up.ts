// npm run bench:catch-up — the chain engine started BENCH_BEHIND (default 10,000) blocks behind the
// head with BENCH_PENDING (default 100,000) pending trackings on the embedded database (or
// DATABASE_URL): how many blocks per second it processes until it reaches the head (target ≥ 200/s).
// The blocks each carry one plain transfer that pays no tracking, so the figure is the follower's
// per-block cost (read, match query, stored progress), not the judging of payments.
import { performance } from 'node:perf_hooks'
import { sql } from 'kysely'
import { createChainEngine } from '../src/engine/chain-engine.ts'
import { startAnvil } from '../test/support/index.ts'
import { startTestService } from '../test/support/service.ts'
import { forgetOwedChecks } from './bulk-pending.ts'

const BEHIND = Number(process.env.BENCH_BEHIND ?? 10_000)
const PENDING = Number(process.env.BENCH_PENDING ?? 100_000)
const NATIVE = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee'

const anvil = await startAnvil({ extraArgs: ['--auto-impersonate'] })
const service = await startTestService({
  background: false,
  chains: { ethereum: { rpc: [anvil.rpcUrl], chainId: anvil.chainId, pollingIntervalMs: 60_000, maxHeadAgeSeconds: null } },
})
try {
  const { accountId } = await service.newAccount('bench')
  await sql`
    INSERT INTO trackings (id, account_id, secret_id, shape, blockchain, sender, nonce, receiver, token, decimals,
      commitment, confirmations, after_block, amount, transaction, status, created_at, updated_at)
    SELECT md5('id' || g), ${accountId}, md5('secret' || g), 'current', 'ethereum',
      '0x' || substr(md5('s' || g), 1, 32) || substr(md5('t' || g), 1, 8), g % 100,
      '0x' || substr(md5('r' || g), 1, 32) || substr(md5('q' || g), 1, 8), ${NATIVE}, 18, 'confirmed', 1, 0, '1',
      CASE WHEN g % 2 = 0 THEN '0x' || md5('h' || g) || md5('k' || g) END, 'pending', now(), now()
    FROM generate_series(1, ${PENDING}::int) AS g`.execute(service.database.db)
  await forgetOwedChecks(service.database.db)
  await sql`ANALYZE trackings`.execute(service.database.db)

  let processed = 0
  const engine = createChainEngine(
    service.common,
    { database: service.database, chains: service.chains, events: service.events, fallbackReadiness: async () => [] },
    { onBlockProcessed: () => void processed++ },
  )
  await engine.start()
  while (!engine.runner('ethereum')?.follower) await new Promise((resolve) => setTimeout(resolve, 5))
  await engine.syncNow()
  await engine.stop()

  // While nobody follows: BENCH_BEHIND blocks, each with one transfer (JSON-RPC batches of
  // eth_sendTransaction + evm_mine, impersonated: one block per transaction, no signing cost here).
  const from = anvil.accounts[1]!.address
  const to = anvil.accounts[2]!.address
  const nonce = await anvil.publicClient.getTransactionCount({ address: from })
  await anvil.rpc('evm_setAutomine', [false])
  for (let i = 0; i < BEHIND; i += 500) {
    const calls = Array.from({ length: Math.min(500, BEHIND - i) }, (_, j) => [
      {
        jsonrpc: '2.0',
        id: 2 * (i + j),
        method: 'eth_sendTransaction',
        params: [{ from, to, value: '0x1', gas: '0x5208', nonce: `0x${(nonce + i + j).toString(16)}` }],
      },
      { jsonrpc: '2.0', id: 2 * (i + j) + 1, method: 'evm_mine', params: [] },
    ]).flat()
    const response = await fetch(anvil.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(calls),
    })
    const answers = (await response.json()) as { error?: { message: string } }[]
    const failed = answers.find((a) => a.error)
    if (failed) throw new Error(failed.error!.message)
  }
  const head = await anvil.publicClient.getBlockNumber()

  const restarted = createChainEngine(
    service.common,
    { database: service.database, chains: service.chains, events: service.events, fallbackReadiness: async () => [] },
    { onBlockProcessed: () => void processed++ },
  )
  processed = 0
  const started = performance.now()
  await restarted.start()
  // The runner takes the lead and checks the chain's identity before it follows.
  while (!restarted.runner('ethereum')?.follower) await new Promise((resolve) => setTimeout(resolve, 5))
  await restarted.syncNow()
  const seconds = (performance.now() - started) / 1000
  const reached = restarted.runner('ethereum')?.follower?.state.head?.number
  await restarted.stop()
  console.log(
    `database: ${service.database.kind}; ${PENDING.toLocaleString('en')} pending; ${processed.toLocaleString('en')} blocks caught up ` +
      `(head ${head}, reached ${reached}) in ${seconds.toFixed(1)} s: ${(processed / seconds).toFixed(0)} blocks/s (target ≥ 200); ` +
      `RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MB`,
  )
} finally {
  await service.close()
  await anvil.stop()
}
