// One chain followed through a single provider that fails a share of requests (HTTP 500/429,
// JSON-RPC -32603, dropped connections, requests hanging past the client's timeout) while Anvil
// mines at a fixed rate and real payments are sent, their trackings created beforehand. Shared by
// the regression test (faster blocks, same ratios) and `npm run bench:flaky` (1 block/s, 2 minutes).
import { parseEther } from 'viem'
import { createPayment, freshAddress, readPayment, startEngineService } from '../engine/support.ts'
import { startFaultyRpcProxy } from './faulty-rpc-proxy.ts'
import { startAnvil } from './anvil.ts'

export interface FlakyRunOptions {
  blocksPerSecond: number
  seconds: number
  /** Share of requests that fail, split as the issue saw it: errors, dropped and hanging requests. */
  failureShare: number
  payments: number
  /** The client's per-request timeout; hanging requests hang past it. */
  rpcTimeoutMs: number
  seed?: number
  /** How long payments may take to be judged once the run ended (mining goes on meanwhile). */
  settleSeconds?: number
}

export interface FlakyRunResult {
  /** Blocks mined but not yet processed, sampled after each mined block. */
  lags: number[]
  statuses: Record<string, number>
  injected: { error: number; hang: number; drop: number }
  blocksMined: number
  /** Requests sent per JSON-RPC method (every attempt counts). */
  requests: Record<string, number>
}

export async function runFlakyProvider(options: FlakyRunOptions): Promise<FlakyRunResult> {
  const anvil = await startAnvil({ noMining: true, slotsInAnEpoch: 1 })
  const proxy = await startFaultyRpcProxy(anvil.rpcUrl, { seed: options.seed ?? 7, hangMs: options.rpcTimeoutMs * 1.5 })
  const blockMs = 1000 / options.blocksPerSecond
  const service = await startEngineService(anvil, {
    chain: { rpc: [proxy.url], rpcTimeoutMs: options.rpcTimeoutMs, pollingIntervalMs: Math.round(blockMs / 4) },
  })
  let miner: NodeJS.Timeout | undefined
  let ticking = Promise.resolve()
  try {
    const { apiKey } = await service.newAccount()
    const senders = anvil.accounts.slice(1)
    const receiver = freshAddress()
    // Trackings first (each sender's next nonces), then the payments during the run.
    const planned: { sender: (typeof senders)[number]; nonce: number; secret: string }[] = []
    const nonces = await Promise.all(senders.map((s) => anvil.publicClient.getTransactionCount({ address: s.address })))
    for (let i = 0; i < options.payments; i++) {
      const index = i % senders.length
      const sender = senders[index]!
      const nonce = nonces[index]!++
      const { request } = await createPayment(service, apiKey, anvil, sender, { receiver, amount: '0.01', nonce })
      planned.push({ sender, nonce, secret: request.secret_id })
    }
    const runner = service.engine.runner('ethereum')!
    const processed = () => runner.follower?.state.head?.number
    // The follower has started at the head before failures begin.
    await anvil.testClient.mine({ blocks: 1 })
    await service.engine.syncNow()
    proxy.setRates({ error: options.failureShare / 2, hang: options.failureShare / 4, drop: options.failureShare / 4 })

    const totalBlocks = Math.round(options.seconds * options.blocksPerSecond)
    const every = Math.max(1, Math.floor(totalBlocks / (options.payments + 1)))
    const lags: number[] = []
    let mined = 0
    let sent = 0
    let head = await anvil.publicClient.getBlockNumber()
    let inRun = true
    // Mining on a fixed schedule (not after the previous mine returned) keeps the rate constant.
    const tick = async () => {
      if (inRun && mined > 0 && mined % every === 0 && sent < planned.length) {
        const payment = planned[sent++]!
        await payment.sender.wallet.sendTransaction({ to: receiver, value: parseEther('0.01'), nonce: payment.nonce })
      }
      await anvil.testClient.mine({ blocks: 1 })
      head++
      mined++
      const at = processed()
      if (inRun && at !== undefined) lags.push(Number(head - at))
    }
    miner = setInterval(() => {
      ticking = ticking.then(tick, tick)
    }, blockMs)
    await new Promise((resolve) => setTimeout(resolve, options.seconds * 1000))
    await ticking
    inRun = false
    // Payments not sent yet (a slow tick) go out now.
    while (sent < planned.length) {
      const payment = planned[sent++]!
      await payment.sender.wallet.sendTransaction({ to: receiver, value: parseEther('0.01'), nonce: payment.nonce })
    }

    const deadline = Date.now() + (options.settleSeconds ?? 30) * 1000
    const statuses: Record<string, number> = {}
    for (;;) {
      for (const key of Object.keys(statuses)) delete statuses[key]
      for (const payment of planned) {
        const record = await readPayment(service, apiKey, payment.secret)
        const status = String(record.status) + (record.failed_reason ? `:${String(record.failed_reason)}` : '')
        statuses[status] = (statuses[status] ?? 0) + 1
      }
      if (!statuses.pending || Date.now() > deadline) break
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    const metrics = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
    const requests: Record<string, number> = {}
    for (const [, method, count] of metrics.matchAll(/paywatch_rpc_requests_total\{chain="ethereum",method="([^"]+)"\} (\d+)/g)) {
      requests[method!] = Number(count)
    }
    return { lags, statuses, injected: { ...proxy.injected }, blocksMined: mined, requests }
  } finally {
    clearInterval(miner)
    await ticking.catch(() => {})
    await service.close()
    await proxy.close()
    await anvil.stop()
  }
}

/** The p-th percentile (0–100) of `values`. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}
