// A provider that lies about token payments and fails selectively never wins a quorum alone. Two
// providers, quorum 2 (and three, one of them down): the liar rewrites the Transfer logs of every
// lookup path that carries them (a block's receipts by hash or by number, a receipt by hash,
// eth_getLogs) and answers its first two receipt requests per transaction with HTTP 500, so that the
// honest provider alone answers those first. A vote is an answer its provider gave for this very
// evidence: no inflated payment becomes a success, no hidden one a failure. When the providers
// contradict each other, both are counted in paywatch_rpc_disagreements_total, the disagreement is
// logged once per tracking and state (not per block), and the tracking's re-checks back off.
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { after, test } from 'node:test'
import pino from 'pino'
import { pad, type Address } from 'viem'
import { deployToken, mintToken, startAnvil, testTokenAbi } from '../support/index.ts'
import { manualClock } from '../support/clock.ts'
import { startFaultyRpcProxy, type FaultyRpcProxy } from '../support/faulty-rpc-proxy.ts'
import type { TestService } from '../support/service.ts'
import { createPayment, engineAtHead, freshAddress, readPayment, startEngineService, waitFor } from './support.ts'

const cleanup: (() => Promise<void>)[] = []
after(async () => {
  for (const step of cleanup.reverse()) await step()
})

const TRANSFER = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'

interface Attack {
  /** `inflate`: every payment pays half and the liar shows it paying all; `hide`: the reverse. */
  mode: 'inflate' | 'hide'
  /** Payments in the one block (from two on, or read ahead: the block's receipts in one call). */
  payments: number
  /** A third provider that is down (every request dropped). */
  oneDown?: boolean
  /** The liar does not offer `eth_getBlockReceipts`: every receipt is read by hash. */
  noBlockReceipts?: boolean
}

/** Rewrites `logs` in place: the amount of every Transfer of `token` to `receiver`, ×2 or ÷2. */
function rewriteLogs(logs: unknown, token: Address, receiver: Address, mode: Attack['mode']): void {
  if (!Array.isArray(logs)) return
  for (const log of logs as { address?: string; topics?: string[]; data?: string }[]) {
    if (log.address?.toLowerCase() !== token.toLowerCase() || log.topics?.[0] !== TRANSFER) continue
    if (log.topics[2]?.toLowerCase() !== pad(receiver).toLowerCase()) continue
    const amount = BigInt(log.data!)
    log.data = pad(`0x${(mode === 'inflate' ? amount * 2n : amount / 2n).toString(16)}`)
  }
}

async function runAttack(attack: Attack) {
  const anvil = await startAnvil()
  cleanup.push(() => anvil.stop())
  const token = await deployToken(anvil, 'Tether', 'USDT', 18)
  const payer = anvil.accounts[1]!
  await mintToken(anvil, token, payer.address, 10n ** 30n)
  // From now on blocks come only when the test mines them: the payments go into one block.
  await anvil.testClient.setAutomine(false)
  const receiver = freshAddress()

  const liar = await startFaultyRpcProxy(anvil.rpcUrl, { seed: 1 })
  const honest = await startFaultyRpcProxy(anvil.rpcUrl, { seed: 2 })
  const proxies = [liar, honest]
  if (attack.oneDown) {
    const down = await startFaultyRpcProxy(anvil.rpcUrl, { seed: 3, drop: 1 })
    proxies.push(down)
  }
  for (const proxy of proxies) cleanup.push(() => proxy.close())
  if (attack.noBlockReceipts) liar.refuseMethods(['eth_getBlockReceipts'])
  // The liar answers first (the honest provider is a little slower).
  honest.setDelay(15)
  const paths = new Map<string, number>()
  const failedPerHash = new Map<string, number>()
  liar.setCallFailure((call) => {
    if (call.method !== 'eth_getTransactionReceipt') return false
    const hash = String(call.params[0]).toLowerCase()
    const failed = failedPerHash.get(hash) ?? 0
    failedPerHash.set(hash, failed + 1)
    return failed < 2
  })
  liar.setRewrite((call, result) => {
    const path =
      call.method === 'eth_getBlockReceipts'
        ? `eth_getBlockReceipts by ${String(call.params[0]).length === 66 ? 'hash' : 'number'}`
        : call.method
    paths.set(path, (paths.get(path) ?? 0) + 1)
    if (call.method === 'eth_getTransactionReceipt') rewriteLogs((result as { logs?: unknown } | null)?.logs, token, receiver, attack.mode)
    if (call.method === 'eth_getBlockReceipts')
      for (const receipt of (result as { logs?: unknown }[] | null) ?? []) rewriteLogs(receipt.logs, token, receiver, attack.mode)
    if (call.method === 'eth_getLogs') rewriteLogs(result, token, receiver, attack.mode)
    return result
  })

  const lines: { msg: string; tracking?: string }[] = []
  const logger = pino(
    { level: 'warn' },
    new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line))
        done()
      },
    }),
  )
  const clock = manualClock(new Date())
  const service = await startEngineService(anvil, {
    logger,
    clock,
    chain: { rpc: proxies.map((p) => p.url), quorum: 2, tokens: [token] },
  })
  cleanup.push(() => service.close())
  await anvil.testClient.mine({ blocks: 1 })
  await engineAtHead(service, anvil)
  const { apiKey } = await service.newAccount()

  // Each tracking expects 10 tokens; `inflate` pays 5 (the liar shows 10), `hide` pays 10 (the liar shows 5).
  const first = await anvil.publicClient.getTransactionCount({ address: payer.address })
  const secrets: string[] = []
  for (let k = 0; k < attack.payments; k++) {
    const { request } = await createPayment(service, apiKey, anvil, payer, {
      receiver,
      token,
      amount: '10',
      nonce: first + k,
      confirmations: 1,
    })
    secrets.push(request.secret_id)
  }
  const paid = attack.mode === 'inflate' ? 5n * 10n ** 18n : 10n * 10n ** 18n
  for (let k = 0; k < attack.payments; k++) {
    await payer.wallet.writeContract({
      address: token,
      abi: testTokenAbi,
      functionName: 'transfer',
      args: [receiver, paid],
      nonce: first + k,
    })
  }
  await anvil.testClient.mine({ blocks: 1 })
  // Block after block, each one judged: the payments are re-judged from their stored evidence each time.
  const statuses = async () => Promise.all(secrets.map(async (s) => (await readPayment(service, apiKey, s)).status as string))
  for (let k = 0; k < 12; k++) {
    await anvil.testClient.mine({ blocks: 1 })
    await engineAtHead(service, anvil)
  }
  return { anvil, service, liar, honest, proxies, paths, lines, clock, statuses }
}

const disagreements = async (service: TestService, proxy: FaultyRpcProxy): Promise<number> => {
  const text = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
  const label = proxy.url.replace(/[.:/]/g, '\\$&')
  return Number(new RegExp(`paywatch_rpc_disagreements_total\\{chain="ethereum",provider="${label}"\\} (\\d+)`).exec(text)?.[1] ?? 0)
}

const disputeLines = (lines: { msg: string; tracking?: string }[]) => lines.filter((l) => /disagree/.test(l.msg))

test("20 payments in one block, the liar's block receipts inflate them: no false success", async () => {
  const run = await runAttack({ mode: 'inflate', payments: 20 })
  assert.ok((run.paths.get('eth_getBlockReceipts by hash') ?? 0) >= 1, `the liar answered the block's receipts (${[...run.paths]})`)
  const statuses = await run.statuses()
  assert.equal(statuses.filter((s) => s === 'success').length, 0, `no false success (${statuses})`)
  // Both providers are in the disagreement: both counted; logged once per tracking, not per block.
  assert.ok((await disagreements(run.service, run.liar)) >= 1, 'the liar is counted')
  assert.ok((await disagreements(run.service, run.honest)) >= 1, 'the honest provider is counted too (no quorum says which is right)')
  const lines = disputeLines(run.lines)
  const perTracking = new Map<string, number>()
  for (const line of lines) perTracking.set(String(line.tracking), (perTracking.get(String(line.tracking)) ?? 0) + 1)
  assert.ok(perTracking.size >= 1, 'the disagreement is logged')
  assert.ok(Math.max(...perTracking.values()) <= 1, `once per tracking over 12 blocks (${[...perTracking.values()]})`)
})

test('a payment alone in its block, the liar inflates it: no false success', async () => {
  const run = await runAttack({ mode: 'inflate', payments: 1 })
  // The quorum reads the block's receipts of each provider it asks, as the follower does: one request per block.
  assert.ok((run.paths.get('eth_getBlockReceipts by hash') ?? 0) >= 1, `the liar answered the block's receipts (${[...run.paths]})`)
  const statuses = await run.statuses()
  assert.equal(statuses.filter((s) => s === 'success').length, 0, `no false success (${statuses})`)
})

test('the liar without eth_getBlockReceipts (its receipt read by hash) inflates a payment: no false success', async () => {
  const run = await runAttack({ mode: 'inflate', payments: 1, noBlockReceipts: true })
  assert.ok((run.paths.get('eth_getTransactionReceipt') ?? 0) >= 1, `the liar answered receipts by hash (${[...run.paths]})`)
  const statuses = await run.statuses()
  assert.equal(statuses.filter((s) => s === 'success').length, 0, `no false success (${statuses})`)
})

test('20 full payments in one block, the liar hides half of each: no false failure', async () => {
  const run = await runAttack({ mode: 'hide', payments: 20 })
  const statuses = await run.statuses()
  assert.equal(statuses.filter((s) => s === 'failed').length, 0, `no false failure (${statuses})`)
})

test('three providers, one down: the liar and the honest one never make a quorum of 2 on a lie', async () => {
  const run = await runAttack({ mode: 'inflate', payments: 20, oneDown: true })
  const statuses = await run.statuses()
  assert.equal(statuses.filter((s) => s === 'success').length, 0, `no false success (${statuses})`)
})

test("while two providers disagree, a tracking's evidence is checked again after a pause, not on every block", async (t) => {
  const run = await runAttack({ mode: 'inflate', payments: 20 })
  const receiptsAsked = (proxy: FaultyRpcProxy) => proxy.arrivals.length
  const before = run.proxies.map(receiptsAsked)
  // 20 more blocks with the clock standing still: no pause is over, so no tracking is checked again.
  for (let k = 0; k < 20; k++) {
    await run.anvil.testClient.mine({ blocks: 1 })
    await engineAtHead(run.service, run.anvil)
  }
  const during = run.proxies.map((p, i) => receiptsAsked(p) - before[i]!)
  t.diagnostic(`requests per provider over 20 blocks: ${during}`)
  // The follower's own reads: a block, its header checks; not 20 receipts per block and provider.
  for (const requests of during) assert.ok(requests < 20 * 5, `requests per provider over 20 blocks: ${during}`)
  // Once the pause is over (the longest first pause: 5 s and its jitter), each tracking is checked once more:
  // at least one receipt per tracking from one of the two (the other's vote is the evidence judged).
  const total = () => run.liar.arrivals.length + run.honest.arrivals.length
  const asked = total()
  run.clock.advance(6_100)
  await run.anvil.testClient.mine({ blocks: 1 })
  await engineAtHead(run.service, run.anvil)
  await waitFor('the re-checks', async () => (total() - asked >= 20 ? true : undefined))
  const statuses = await run.statuses()
  assert.equal(statuses.filter((s) => s === 'success').length, 0)
})
