// Hedged reads: when the provider asked first is slower than its recent p90 (at least 200 ms), the
// same read goes to the next provider and the first good answer is taken; each hedge is counted
// per slow provider. A write is never sent twice.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import pino from 'pino'
import { Registry, type Counter } from 'prom-client'
import { createPublicClient, http } from 'viem'
import { failover } from '../../src/chain/failover-transport.ts'
import { createProviderMetrics } from '../../src/chain/provider-metrics.ts'
import { ProviderPool } from '../../src/chain/provider-pool.ts'
import { systemClock } from '../../src/common/clock.ts'
import { startFaultyRpcProxy, type FaultyRpcProxy } from '../support/faulty-rpc-proxy.ts'
import { startAnvil, type Anvil } from '../support/index.ts'

let anvil: Anvil
let proxies: FaultyRpcProxy[]
before(async () => {
  anvil = await startAnvil()
  proxies = await Promise.all([1, 2].map((seed) => startFaultyRpcProxy(anvil.rpcUrl, { seed })))
})
after(async () => {
  for (const proxy of proxies ?? []) await proxy.close()
  await anvil?.stop()
})

function setUp() {
  const registry = new Registry()
  const pool = new ProviderPool({
    chain: 'ethereum',
    urls: proxies.map((p) => p.url),
    rps: [null, null],
    clock: systemClock,
    logger: pino({ level: 'silent' }),
    metrics: createProviderMetrics(registry),
  })
  // Recent latencies: the first provider answers in 5 ms (hedged after the 200 ms floor), the second in 20 ms.
  for (let n = 0; n < 10; n++) {
    pool.observe(0, { method: 'eth_blockNumber', endpoint: 0, ok: true, durationMs: 5 })
    pool.observe(1, { method: 'eth_blockNumber', endpoint: 1, ok: true, durationMs: 20 })
  }
  const transport = failover(
    proxies.map((p) => http(p.url, { retryCount: 0, timeout: 10_000 })),
    { pool },
  )
  const client = createPublicClient({ transport, cacheTime: 0 })
  const hedges = async (i: number) => {
    const metric = registry.getSingleMetric('paywatch_rpc_hedged_requests_total') as Counter
    return (await metric.get()).values.find((v) => v.labels.provider === pool.providers[i]!.label)?.value ?? 0
  }
  return { pool, client, hedges }
}

test('a slow first provider is hedged: the next one answers, the hedge is counted', async () => {
  const { pool, client, hedges } = setUp()
  assert.equal(pool.hedgeDelayMs(0), 200)
  assert.deepEqual(pool.order(), [0, 1])
  proxies[0]!.setDelay(3_000)
  const before = proxies.map((p) => p.forwarded)
  const block = await client.getBlock({ blockTag: 'latest' })
  // The slow provider's proxy forwards after its delay: the answer came before it even asked the node.
  const slowForwarded = proxies[0]!.forwarded - before[0]!
  proxies[0]!.setDelay(0)
  assert.equal(block.number, await anvil.publicClient.getBlockNumber())
  assert.equal(proxies[1]!.forwarded - before[1]!, 1, 'the read went to the second provider')
  assert.equal(await hedges(0), 1)
  assert.equal(await hedges(1), 0)
  assert.equal(slowForwarded, 0, 'the slow answer was not waited for')
})

test('a provider answering in time is not hedged', async () => {
  const { client, hedges } = setUp()
  const before = proxies.map((p) => p.forwarded)
  await client.getBlockNumber({ cacheTime: 0 })
  assert.equal(proxies[1]!.forwarded - before[1]!, 0)
  assert.equal(await hedges(0), 0)
})

test('a write is never hedged', async () => {
  const { client, hedges } = setUp()
  proxies[0]!.setDelay(500)
  const raw = await anvil.accounts[1]!.wallet.signTransaction({
    to: anvil.accounts[2]!.address,
    value: 1n,
    ...(await anvil.publicClient.estimateFeesPerGas()),
    gas: 21_000n,
    nonce: await anvil.publicClient.getTransactionCount({ address: anvil.accounts[1]!.address }),
    chain: anvil.publicClient.chain,
  } as never)
  const before = proxies.map((p) => p.forwarded)
  await client.sendRawTransaction({ serializedTransaction: raw })
  proxies[0]!.setDelay(0)
  assert.equal(proxies[1]!.forwarded - before[1]!, 0, 'sent once, to the first provider')
  assert.equal(await hedges(0), 0)
})
