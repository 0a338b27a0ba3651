// Quorum 2 of two providers, one of which hangs (every request left unanswered): the payments it
// would confirm stay pending, and the follower keeps up with the chain. Each quorum vote has a timeout
// of its own, a quarter of the RPC timeout, and votes are asked at once: a hanging provider holds each
// block a moment, not the whole RPC timeout (1 block/s, 2 s timeout: before, the lag grew by a block
// every two seconds). Once the provider answers again, the payments are judged.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { parseEther } from 'viem'
import { startAnvil } from '../support/index.ts'
import { startFaultyRpcProxy } from '../support/faulty-rpc-proxy.ts'
import { percentile } from '../support/flaky-run.ts'
import { createPayment, engineAtHead, freshAddress, readPayment, startEngineService, waitFor } from './support.ts'

const cleanup: (() => Promise<void>)[] = []
after(async () => {
  for (const step of cleanup.reverse()) await step()
})

test('a hanging provider does not hold the follower for the RPC timeout on each block', async (t) => {
  const anvil = await startAnvil({ noMining: true, slotsInAnEpoch: 1 })
  cleanup.push(() => anvil.stop())
  const [steady, hanging] = await Promise.all([1, 2].map((seed) => startFaultyRpcProxy(anvil.rpcUrl, { seed })))
  cleanup.push(
    () => steady!.close(),
    () => hanging!.close(),
  )
  const service = await startEngineService(anvil, {
    chain: { rpc: [steady!.url, hanging!.url], quorum: 2, rpcTimeoutMs: 2_000, pollingIntervalMs: 100 },
  })
  cleanup.push(() => service.close())
  const { apiKey } = await service.newAccount()
  const mineOne = async () => {
    await anvil.testClient.mine({ blocks: 1 })
  }
  // Warm up: both providers answer a few blocks (their latencies are known).
  for (let k = 0; k < 5; k++) {
    await mineOne()
    await engineAtHead(service, anvil)
  }
  const receiver = freshAddress()
  const payers = anvil.accounts.slice(1, 6)
  const secrets: string[] = []
  for (const payer of payers)
    secrets.push((await createPayment(service, apiKey, anvil, payer, { receiver, amount: '0.01', confirmations: 1 })).request.secret_id)
  hanging!.setHanging(true)
  for (const payer of payers) await payer.wallet.sendTransaction({ to: receiver, value: parseEther('0.01') })

  // 24 blocks at 1 block/s; the lag is sampled before each block from the fifth on.
  const runner = service.engine.runner('ethereum')!
  const lags: number[] = []
  for (let k = 0; k < 24; k++) {
    const head = await anvil.publicClient.getBlockNumber()
    const processed = runner.follower?.state.head?.number ?? 0n
    if (k >= 4) lags.push(Number(head - processed))
    await mineOne()
    await new Promise((resolve) => setTimeout(resolve, 1_000))
  }
  const shape = `p50 ${percentile(lags, 50)}, p90 ${percentile(lags, 90)}, max ${Math.max(...lags)}: ${lags}`
  t.diagnostic(`lag in blocks: ${shape}`)
  assert.ok(percentile(lags, 90) <= 3, `the follower keeps up (${shape})`)
  for (const secret of secrets)
    assert.equal((await readPayment(service, apiKey, secret)).status, 'pending', 'no quorum without the second provider')

  hanging!.setHanging(false)
  await waitFor(
    'the payments to be judged once both providers answer',
    async () => {
      await mineOne()
      await engineAtHead(service, anvil)
      const statuses = await Promise.all(secrets.map(async (s) => (await readPayment(service, apiKey, s)).status))
      return statuses.every((s) => s === 'success') ? true : undefined
    },
    30_000,
  )
})
