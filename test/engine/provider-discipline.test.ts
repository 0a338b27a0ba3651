// Provider discipline against real Anvil nodes behind fault-injecting proxies: a provider that
// lags 5 blocks is asked last and shown as lagging; a provider that answers 429 with Retry-After
// is waited for and its request budget (rps) is kept, the payment still succeeds; a provider
// without any trace method leaves a native payment through a router pending (never failed) while a
// direct native payment succeeds; a provider with trace_transaction alone gives the internal calls.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import pino from 'pino'
import { parseEther, type Address } from 'viem'
import { deployRouter, mine, routerPayNative, sendNative, startAnvil, type Anvil } from '../support/index.ts'
import { startFaultyRpcProxy, type FaultyRpcProxy } from '../support/faulty-rpc-proxy.ts'
import type { TestService } from '../support/service.ts'
import { manualClock } from '../support/clock.ts'
import { createPayment, engineAtHead, freshAddress, readPayment, startEngineService, waitFor, waitForFinal } from './support.ts'

const cleanup: (() => Promise<void>)[] = []
after(async () => {
  for (const step of cleanup.reverse()) await step()
})

async function node(): Promise<Anvil> {
  const anvil = await startAnvil()
  cleanup.push(() => anvil.stop())
  return anvil
}

async function proxyOf(anvil: Anvil, seed = 1): Promise<FaultyRpcProxy> {
  const proxy = await startFaultyRpcProxy(anvil.rpcUrl, { seed })
  cleanup.push(() => proxy.close())
  return proxy
}

async function serve(anvil: Anvil, options: Parameters<typeof startEngineService>[1]): Promise<TestService> {
  const service = await startEngineService(anvil, options)
  cleanup.push(() => service.close())
  return service
}

const metric = async (service: TestService, name: string, proxy: FaultyRpcProxy): Promise<number> => {
  const text = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
  const label = proxy.url.replace(/[.:/]/g, '\\$&')
  return Number(new RegExp(`${name}\\{chain="ethereum",provider="${label}"\\} (\\d+)`).exec(text)?.[1] ?? Number.NaN)
}

test('a provider 5 blocks behind is shown lagging, asked last, and payments still succeed at the head', async () => {
  const anvil = await node()
  const [lagging, current] = [await proxyOf(anvil, 1), await proxyOf(anvil, 2)]
  await mine(anvil, 10)
  lagging.setLag(5)
  const service = await serve(anvil, { chain: { rpc: [lagging.url, current.url] } })
  await service.engine.probeProviders()
  const { apiKey } = await service.newAccount()
  const sender = anvil.accounts[1]!
  const receiver = freshAddress()
  const { request } = await createPayment(service, apiKey, anvil, sender, { receiver, amount: '1' })
  const paid = await sendNative(anvil, sender, receiver, parseEther('1'))
  const record = await waitForFinal(service, apiKey, request.secret_id)
  assert.equal(record.status, 'success')
  assert.equal(record.transaction, paid.transactionHash.toLowerCase())
  await service.engine.probeProviders()
  const ready = await service.app.inject({ method: 'GET', url: '/readyz' })
  assert.equal(ready.statusCode, 200, ready.body)
  const providers = ready.json().chains[0].providers as { url: string; lag: number; state: string }[]
  assert.deepEqual(
    providers.map((p) => [p.url, p.lag, p.state]),
    [
      [lagging.url, 5, 'lagging'],
      [current.url, 0, 'ok'],
    ],
  )
  assert.equal(await metric(service, 'paywatch_rpc_provider_head_lag_blocks', lagging), 5)
  assert.ok((await metric(service, 'paywatch_rpc_provider_requests_total', current)) > 0)
})

test('429 with Retry-After is waited for, the rps budget is kept, and the payment succeeds', async () => {
  const anvil = await node()
  const limited = await proxyOf(anvil)
  const service = await serve(anvil, { chain: { rpc: [{ url: limited.url, rps: 20 }] } })
  const { apiKey } = await service.newAccount()
  const sender = anvil.accounts[1]!
  const receiver = freshAddress()
  const { request } = await createPayment(service, apiKey, anvil, sender, { receiver, amount: '1' })
  limited.arrivals.length = 0
  limited.rateLimit(3, 1)
  const started = performance.now()
  await sendNative(anvil, sender, receiver, parseEther('1'))
  const record = await waitForFinal(service, apiKey, request.secret_id)
  assert.equal(record.status, 'success')
  assert.equal(limited.injected.rateLimited, 3)
  // The node asked for a second: once the 429 was read (requests already under way land within
  // milliseconds), nothing more was sent to it before that second passed.
  const limitedAt = limited.arrivals[2]!
  const early = limited.arrivals.filter((t) => t - limitedAt > 50 && t - limitedAt < 900)
  assert.deepEqual(early, [], 'nothing sent while Retry-After runs')
  assert.ok(
    limited.arrivals.some((t) => t - limitedAt >= 900),
    'asked again after the pause',
  )
  // The budget: never more than 20 requests in any second (a little slack for timer rounding).
  for (const [i, at] of limited.arrivals.entries()) {
    const inSecond = limited.arrivals.slice(i).filter((t) => t - at < 1000).length
    assert.ok(inSecond <= 21, `${inSecond} requests within one second from ${Math.round(at - started)} ms`)
  }
  assert.equal(await metric(service, 'paywatch_rpc_provider_rate_limited_total', limited), 3)
  assert.ok((await metric(service, 'paywatch_rpc_provider_errors_total', limited)) >= 3)
})

test('without any trace method: a native payment through a router stays pending, a direct one succeeds', async () => {
  const anvil = await node()
  const router: Address = await deployRouter(anvil)
  const bare = await proxyOf(anvil)
  bare.refuseMethods(['debug_traceTransaction', 'trace_transaction'])
  const lines: { msg: string; level: number }[] = []
  const logger = pino({ level: 'info' }, { write: (raw: string) => void lines.push(JSON.parse(raw)) })
  const service = await serve(anvil, { logger, chain: { rpc: [bare.url] } })
  await service.engine.probeProviders()
  const { apiKey } = await service.newAccount()
  const [alice, bob] = [anvil.accounts[1]!, anvil.accounts[2]!]
  const receiver = freshAddress()
  const throughRouter = await createPayment(service, apiKey, anvil, alice, { receiver, amount: '1' })
  const direct = await createPayment(service, apiKey, anvil, bob, { receiver, amount: '1' })
  await routerPayNative(anvil, router, alice, { receiver, value: parseEther('1') })
  await sendNative(anvil, bob, receiver, parseEther('1'))
  assert.equal((await waitForFinal(service, apiKey, direct.request.secret_id)).status, 'success')
  await mine(anvil, 3)
  await waitFor('the unprovable payment logged', async () => (lines.some((l) => /cannot be read/.test(l.msg)) ? true : undefined))
  await mine(anvil, 2)
  await service.engine.syncNow()
  assert.equal((await readPayment(service, apiKey, throughRouter.request.secret_id)).status, 'pending', 'never failed on missing evidence')
  assert.equal(lines.filter((l) => /cannot be read/.test(l.msg)).length, 1, 'logged once')
  const ready = (await service.app.inject({ method: 'GET', url: '/readyz' })).json()
  assert.deepEqual(ready.chains[0].providers[0].capabilities, ['eth_getBlockReceipts'])
  assert.ok(bare.injected.refused >= 1)
})

test('with trace_transaction and no debug_traceTransaction: a native payment through a router succeeds', async () => {
  const anvil = await node()
  const router: Address = await deployRouter(anvil)
  const parityOnly = await proxyOf(anvil)
  parityOnly.refuseMethods(['debug_traceTransaction'])
  const service = await serve(anvil, { chain: { rpc: [parityOnly.url] } })
  await service.engine.probeProviders()
  const { apiKey } = await service.newAccount()
  const alice = anvil.accounts[1]!
  const receiver = freshAddress()
  const { request } = await createPayment(service, apiKey, anvil, alice, { receiver, amount: '1' })
  const paid = await routerPayNative(anvil, router, alice, { receiver, value: parseEther('1') })
  const record = await waitForFinal(service, apiKey, request.secret_id)
  assert.deepEqual([record.status, record.transaction], ['success', paid.transactionHash.toLowerCase()])
  assert.ok(parityOnly.injected.refused >= 1, 'debug_traceTransaction was refused')
  const ready = (await service.app.inject({ method: 'GET', url: '/readyz' })).json()
  assert.deepEqual(ready.chains[0].providers[0].capabilities, ['eth_getBlockReceipts', 'trace_transaction'])
})

test('a head older than maxHeadAgeSeconds makes /readyz 503', async () => {
  const anvil = await node()
  const clock = manualClock(new Date())
  const service = await serve(anvil, { clock, chain: { rpc: [anvil.rpcUrl], maxHeadAgeSeconds: 30 } })
  await engineAtHead(service, anvil)
  const fresh = await service.app.inject({ method: 'GET', url: '/readyz' })
  assert.equal(fresh.statusCode, 200, fresh.body)
  assert.equal(fresh.json().chains[0].maxHeadAgeSeconds, 30)
  clock.advance(60_000)
  const stale = await service.app.inject({ method: 'GET', url: '/readyz' })
  assert.equal(stale.statusCode, 503)
  assert.match(stale.json().chains[0].error, /the head is \d+ s old \(more than 30 s\)/)
})

test('a provider of another network among the providers is refused; the others serve the chain', async () => {
  const anvil = await node()
  const other = await startAnvil({ chainId: 999 })
  cleanup.push(() => other.stop())
  const wrong = await proxyOf(other)
  const lines: { msg: string; level: number }[] = []
  const logger = pino({ level: 'info' }, { write: (raw: string) => void lines.push(JSON.parse(raw)) })
  const service = await serve(anvil, { logger, chain: { rpc: [wrong.url, anvil.rpcUrl] } })
  const { apiKey } = await service.newAccount()
  const sender = anvil.accounts[1]!
  const receiver = freshAddress()
  const { request } = await createPayment(service, apiKey, anvil, sender, { receiver, amount: '1' })
  await sendNative(anvil, sender, receiver, parseEther('1'))
  assert.equal((await waitForFinal(service, apiKey, request.secret_id)).status, 'success')
  const refused = lines.filter((l) => l.level >= 50 && l.msg.includes(`RPC provider ${wrong.url} refused`))
  assert.equal(refused.length, 1, 'one error line naming the provider')
  assert.match(refused[0]!.msg, /serves chain id 999/)
  const ready = await service.app.inject({ method: 'GET', url: '/readyz' })
  assert.equal(ready.statusCode, 200, ready.body)
  assert.deepEqual(
    ready.json().chains[0].providers.map((p: { state: string }) => p.state),
    ['refused', 'ok'],
  )
})
