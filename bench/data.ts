// npm run bench:data — assets and prices on a local Anvil, through a counting RPC proxy.
//
// Assets: an account holding 50 tokens (Multicall3 and JSON-RPC batch chains): RPC round trips per
// request and latency, against the naive way (one eth_call per token, side by side) in the same run.
// Prices: cold (cache expired: pool discovery + reserves) and cached latency, and cached requests/s.
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import { createPublicClient, erc20Abi, getAddress, http, type Address } from 'viem'
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts'
import { manualClock } from '../test/support/clock.ts'
import {
  addLiquidity,
  createPair,
  deployMulticall3,
  deployToken,
  deployUniswapV2,
  deployWeth,
  mintToken,
  sendNative,
  startAnvil,
} from '../test/support/index.ts'
import { startRpcProxy } from '../test/support/rpc-proxy.ts'
import { startTestService } from '../test/support/service.ts'

interface CannonResult {
  requests: { average: number; total: number }
  latency: { p50: number; p99: number }
  non2xx: number
  errors: number
}
const autocannon = createRequire(import.meta.url)('autocannon') as (options: Record<string, unknown>) => Promise<CannonResult>

const TOKENS = 50
const SEQUENTIAL = 200
const COLD_ROUNDS = 40

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}
const ms = (value: number) => `${value.toFixed(2)} ms`
async function timed(n: number, run: (i: number) => Promise<void>): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < n; i++) {
    const start = performance.now()
    await run(i)
    times.push(performance.now() - start)
  }
  return times
}
// autocannon resolves with requests still in flight; let them finish before counting again.
const settle = () => new Promise((resolve) => setTimeout(resolve, 500))
const summary = (times: number[]) => `p50 ${ms(percentile(times, 50))}, p95 ${ms(percentile(times, 95))}, p99 ${ms(percentile(times, 99))}`

const anvil = await startAnvil()
const proxy = await startRpcProxy(anvil.rpcUrl)
try {
  console.log(`setting up: ${TOKENS} tokens, Multicall3, Uniswap V2 pools…`)
  const multicall3 = await deployMulticall3(anvil)
  const factory = await deployUniswapV2(anvil)
  const weth = getAddress(await deployWeth(anvil))
  const usdc = getAddress(await deployToken(anvil, 'USD Coin', 'USDC', 6))
  const dai = getAddress(await deployToken(anvil, 'Dai', 'DAI', 18))
  const tkn = getAddress(await deployToken(anvil, 'Token', 'TKN', 18))
  const holder = privateKeyToAddress(generatePrivateKey())
  await sendNative(anvil, anvil.accounts[1]!, holder, 10n ** 18n)
  const held: Address[] = [weth, usdc, dai]
  while (held.length < TOKENS) {
    held.push(getAddress(await deployToken(anvil, `Token ${held.length}`, `T${held.length}`, held.length % 2 ? 6 : 18)))
  }
  for (const [i, token] of held.entries()) await mintToken(anvil, token, holder, BigInt(i + 1) * 1_000_000n)
  const me = anvil.walletClient.account.address
  const liquidity = async (a: Address, amountA: bigint, b: Address, amountB: bigint) => {
    await mintToken(anvil, a, me, amountA)
    await mintToken(anvil, b, me, amountB)
    await addLiquidity(anvil, await createPair(anvil, factory, a, b), a, amountA, b, amountB)
  }
  const e18 = 10n ** 18n
  await liquidity(weth, 10n * e18, usdc, 30_000n * 10n ** 6n)
  await liquidity(weth, 10n * e18, dai, 30_300n * e18)
  await liquidity(tkn, 1000n * e18, usdc, 2000n * 10n ** 6n)
  await liquidity(tkn, 1000n * e18, dai, 2010n * e18)
  await liquidity(tkn, 3000n * e18, weth, 2n * e18)

  const clock = manualClock(new Date())
  const chain = {
    rpc: [proxy.url],
    chainId: anvil.chainId,
    wrapped: weth,
    stablecoins: [usdc, dai],
    tokens: held,
    uniswapV2Factories: [factory],
  }
  const service = await startTestService({
    chains: { ethereum: { ...chain, multicall3 }, batchnet: { ...chain, multicall3: null } },
    env: {
      PAYWATCH_RATE_RPS: '1000000',
      PAYWATCH_RATE_PARALLEL: '1000000',
      PAYWATCH_RATE_DAILY: '1000000000',
      PAYWATCH_PRICE_CACHE_MS: '30000',
    },
    background: false,
    clock,
  })
  try {
    const { apiKey } = await service.newAccount()
    const base = await service.listen()
    const get = async (path: string) => {
      const response = await fetch(`${base}${path}`, { headers: { 'x-api-key': apiKey } })
      if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`)
      return response.json() as Promise<unknown>
    }

    console.log(`\n== assets: account holding ${TOKENS} tokens + native ==`)
    let multicallWarm: number[] = []
    for (const chainName of ['ethereum', 'batchnet']) {
      const label = chainName === 'ethereum' ? 'Multicall3 aggregate3' : 'JSON-RPC batch (no Multicall3)'
      proxy.reset()
      const coldStart = performance.now()
      const first = (await get(`/v2/accounts/${chainName}/${holder}/assets`)) as unknown[]
      const cold = performance.now() - coldStart
      const coldTrips = proxy.requests.length
      proxy.reset()
      const times = await timed(SEQUENTIAL, async () => void (await get(`/v2/accounts/${chainName}/${holder}/assets`)))
      if (chainName === 'ethereum') multicallWarm = times
      console.log(`${label}: ${first.length} assets; cold (metadata too): ${coldTrips} round trip(s), ${ms(cold)}`)
      console.log(`  warm: ${(proxy.requests.length / SEQUENTIAL).toFixed(2)} round trip(s)/request, ${summary(times)}`)
    }
    // The naive way, for comparison: one eth_call per balance (+ eth_getBalance), side by side.
    const direct = createPublicClient({ transport: http(proxy.url, { batch: false }) })
    proxy.reset()
    const naive = await timed(20, async () => {
      await Promise.all([
        direct.getBalance({ address: holder }),
        ...held.map((token) => direct.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [holder] })),
      ])
    })
    console.log(
      `  naive per-token reads (no HTTP API in front): ${proxy.requests.length / 20} round trips/request, ${summary(naive)}; ` +
        `p50 ratio naive/assets endpoint ${(percentile(naive, 50) / percentile(multicallWarm, 50)).toFixed(1)}×`,
    )
    proxy.reset()
    const assetsCannon = await autocannon({
      url: `${base}/v2/accounts/ethereum/${holder}/assets`,
      headers: { 'x-api-key': apiKey },
      connections: 10,
      duration: 5,
    })
    await settle()
    console.log(
      `  throughput (10 connections, 5 s): ${assetsCannon.requests.average.toFixed(0)} req/s, ` +
        `p50 ${assetsCannon.latency.p50} ms, ${(proxy.requests.length / assetsCannon.requests.total).toFixed(2)} round trips/request, ` +
        `non-2xx ${assetsCannon.non2xx}, errors ${assetsCannon.errors}`,
    )

    console.log('\n== prices ==')
    for (const [label, token] of [
      ['TKN (3 quotes: 2 direct, 1 via WETH)', tkn],
      ['native (= WETH, 2 quotes)', '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE'],
    ] as const) {
      proxy.reset()
      let value: unknown
      const cold = await timed(COLD_ROUNDS, async () => {
        clock.advance(30_001) // every request finds the cache expired
        value = await get(`/v2/prices/ethereum/${token}`)
      })
      const coldTrips = proxy.requests.length / COLD_ROUNDS
      proxy.reset()
      const cached = await timed(SEQUENTIAL, async () => void (await get(`/v2/prices/ethereum/${token}`)))
      console.log(`${label} = ${String(value)}`)
      console.log(`  cold: ${coldTrips} round trips, ${summary(cold)}`)
      console.log(
        `  cached: ${proxy.requests.length} round trips in ${SEQUENTIAL} requests, ${summary(cached)}; ` +
          `cold/cached p50 ratio ${(percentile(cold, 50) / percentile(cached, 50)).toFixed(1)}×`,
      )
    }
    await get(`/v2/prices/ethereum/${tkn}`) // cached again (the cold runs above moved the clock on)
    proxy.reset()
    const pricesCannon = await autocannon({
      url: `${base}/v2/prices/ethereum/${tkn}`,
      headers: { 'x-api-key': apiKey },
      connections: 10,
      duration: 5,
    })
    console.log(
      `cached price throughput (10 connections, 5 s): ${pricesCannon.requests.average.toFixed(0)} req/s, ` +
        `p50 ${pricesCannon.latency.p50} ms, p99 ${pricesCannon.latency.p99} ms, RPC round trips ${proxy.requests.length} ` +
        `in ${pricesCannon.requests.total} requests, ` +
        `non-2xx ${pricesCannon.non2xx}, errors ${pricesCannon.errors}`,
    )
  } finally {
    await service.close()
  }
} finally {
  await proxy.close()
  await anvil.stop()
}
