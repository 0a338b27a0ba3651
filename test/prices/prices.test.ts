import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { getAddress, type Abi, type Address, type Hex } from 'viem'
import {
  addLiquidity,
  compileContracts,
  createPair,
  deployContract,
  deployMulticall3,
  deployToken,
  deployUniswapV2,
  deployWeth,
  mintToken,
  startAnvil,
  uniswapV2PairAbi,
  type Anvil,
} from '../support/index.ts'
import { manualClock } from '../support/clock.ts'
import { startRpcProxy, type RpcProxy } from '../support/rpc-proxy.ts'
import { startTestService, type TestService } from '../support/service.ts'

const CACHE_MS = 30_000
const units = (whole: number | string, decimals: number) => {
  const [int, fraction = ''] = String(whole).split('.')
  return BigInt(int! + fraction.padEnd(decimals, '0'))
}

let anvil: Anvil
let proxy: RpcProxy
let service: TestService
let apiKey: string
const clock = manualClock()
const t = {} as Record<'weth' | 'usdc' | 'dai' | 'usdt' | 'busd' | 'tkn' | 'routed' | 'thin' | 'lonely' | 'cached' | 'vthree', Address>
const decimals: Record<string, number> = {}
let factory: Address
let cachedPair: Address

/** A Uniswap V2 pair holding exactly these whole-token reserves. */
async function pool(a: Address, amountA: number | string, b: Address, amountB: number | string): Promise<Address> {
  const pair = await createPair(anvil, factory, a, b)
  const [rawA, rawB] = [units(amountA, decimals[a]!), units(amountB, decimals[b]!)]
  await mintToken(anvil, a, anvil.walletClient.account.address, rawA)
  await mintToken(anvil, b, anvil.walletClient.account.address, rawB)
  await addLiquidity(anvil, pair, a, rawA, b, rawB)
  return pair
}

/**
 * A V3-style pool (slot0 layout of Uniswap V3) where one whole `base` is worth `price` whole `quote`,
 * both tokens having 18 decimals so that the square root is exact; `quoteHeld` whole quote tokens are
 * sent to it as its liquidity.
 */
async function v3Pool(base: Address, quote: Address, sqrtPrice: bigint, quoteHeld: bigint): Promise<Address> {
  const { UniswapV3PoolLike: artifact } = (await compileContracts()) as unknown as Record<string, { abi: Abi; bytecode: Hex }>
  const Q96 = 2n ** 96n
  // slot0 is sqrt(token1 / token0): the inverse when the base sorts second.
  const sqrtPriceX96 = base.toLowerCase() < quote.toLowerCase() ? sqrtPrice * Q96 : Q96 / sqrtPrice
  const address = await deployContract(anvil, artifact!, [base, quote, sqrtPriceX96])
  await mintToken(anvil, quote, address, quoteHeld * 10n ** 18n)
  return getAddress(address)
}

async function token(name: keyof typeof t, tokenDecimals: number): Promise<void> {
  t[name] = getAddress(await deployToken(anvil, name, name.toUpperCase(), tokenDecimals))
  decimals[t[name]] = tokenDecimals
}

const price = (tokenAddress: string, blockchain = 'ethereum') =>
  service.api(apiKey, { method: 'GET', url: `/v2/prices/${blockchain}/${tokenAddress}` })

before(async () => {
  anvil = await startAnvil()
  proxy = await startRpcProxy(anvil.rpcUrl)
  const multicall3 = await deployMulticall3(anvil)
  factory = await deployUniswapV2(anvil)
  t.weth = getAddress(await deployWeth(anvil))
  decimals[t.weth] = 18
  await token('usdc', 6)
  await token('dai', 18)
  await token('usdt', 6)
  await token('busd', 18)
  for (const name of ['tkn', 'routed', 'thin', 'lonely', 'cached'] as const) await token(name, 18)

  // Wrapped native: 3,000 and 3,060 USD → 3,030.
  await pool(t.weth, 10, t.usdc, 30_000)
  await pool(t.weth, 10, t.dai, 30_600)
  // TKN against three stablecoins: 2.00, 2.02 and an outlier at 3.00; plus a thin pool (500 BUSD) at 5.00.
  await pool(t.tkn, 1000, t.usdc, 2000)
  await pool(t.tkn, 1000, t.dai, 2020)
  await pool(t.tkn, 1000, t.usdt, 3000)
  await pool(t.tkn, 100, t.busd, 500)
  // ROUTED only trades against WETH: 0.002 WETH each.
  await pool(t.routed, 1000, t.weth, 2)
  // THIN only has a pool below 1 WETH.
  await pool(t.thin, 1000, t.weth, '0.5')
  cachedPair = await pool(t.cached, 1000, t.usdc, 4000)
  // VTHREE only has V3 pools: 4 DAI (5,000 DAI deep) and 16 BUSD in a pool holding only 100 BUSD.
  await token('vthree', 18)
  const v3Pools = [await v3Pool(t.vthree, t.dai, 2n, 5000n), await v3Pool(t.vthree, t.busd, 4n, 100n)]

  service = await startTestService({
    chains: {
      ethereum: {
        rpc: [proxy.url],
        chainId: anvil.chainId,
        multicall3,
        wrapped: t.weth,
        stablecoins: [t.usdc, t.dai, t.usdt, t.busd],
        tokens: [],
        uniswapV2Factories: [factory],
        uniswapV3Pools: v3Pools,
      },
    },
    env: { PAYWATCH_RATE_RPS: '1000', PAYWATCH_RATE_PARALLEL: '100', PAYWATCH_PRICE_CACHE_MS: String(CACHE_MS) },
    background: false,
    clock,
  })
  apiKey = (await service.newAccount()).apiKey
})
after(async () => {
  await service?.close()
  await proxy?.close()
  await anvil?.stop()
})

async function expectPrice(tokenAddress: string, expected: number, blockchain?: string) {
  const res = await price(tokenAddress, blockchain)
  assert.equal(res.statusCode, 200, res.body)
  assert.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  assert.equal(res.body, JSON.stringify(expected), 'a bare JSON number')
}

test('a USD stablecoin is 1, without any RPC call', async () => {
  proxy.reset()
  await expectPrice(t.usdc, 1)
  await expectPrice(t.dai.toLowerCase(), 1)
  assert.equal(proxy.requests.length, 0)
})

test('direct stablecoin pairs: the outlier pool is dropped, the thin pool ignored, the rest averaged', async () => {
  await expectPrice(t.tkn, 2.01)
})

test('the wrapped native token is priced from its stablecoin pairs', async () => {
  await expectPrice(t.weth, 3030)
})

test('a token trading only against the wrapped native token is priced through it', async () => {
  await expectPrice(t.routed, 6.06) // 0.002 WETH × 3,030 USD, exactly
})

test('configured V3 pools are quoted from slot0, and a thin one is ignored', async () => {
  await expectPrice(t.vthree, 4)
})

test('the native placeholder in any letter case is the wrapped token', async () => {
  for (const placeholder of [
    '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE',
    '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee',
    '0xEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEE',
  ]) {
    await expectPrice(placeholder, 3030)
  }
})

test('no route is a 404 problem: no pool, a pool below 1 wrapped native, not a contract', async () => {
  for (const address of [t.lonely, t.thin, '0x000000000000000000000000000000000000dEaD']) {
    const res = await price(address)
    assert.equal(res.statusCode, 404, `${address}: ${res.body}`)
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
    assert.equal(res.json().code, 'NOT_FOUND')
  }
})

test('bad input: an invalid address is a 400, an unknown chain a 400 UNSUPPORTED_BLOCKCHAIN', async () => {
  const invalid = await price('0xnothex')
  assert.equal(invalid.statusCode, 400)
  assert.equal(invalid.json().code, 'VALIDATION_FAILED')
  assert.equal(invalid.json().errors[0].path, 'token_address')
  const unknown = await price(t.tkn, 'atlantis')
  assert.equal(unknown.statusCode, 400)
  assert.equal(unknown.json().code, 'UNSUPPORTED_BLOCKCHAIN')
})

test('prices are cached for the configured time, batched, and concurrent requests share one computation', async () => {
  proxy.reset()
  await expectPrice(t.cached, 4)
  const cold = proxy.requests.length
  assert.equal(cold, 2, 'pool discovery and reserves: two multicalls')
  assert.deepEqual(
    proxy.requests.flatMap((r) => r.methods),
    ['eth_call', 'eth_call'],
  )

  // The pool moves (4,000 more USDC): within the cache time the old price stands, with no RPC call.
  await mintToken(anvil, t.usdc, cachedPair, units(4000, 6))
  const sync = await anvil.walletClient.writeContract({ address: cachedPair, abi: uniswapV2PairAbi, functionName: 'sync' })
  await anvil.publicClient.waitForTransactionReceipt({ hash: sync })
  proxy.reset()
  clock.advance(CACHE_MS - 1)
  await expectPrice(t.cached, 4)
  assert.equal(proxy.requests.length, 0, 'served from the cache')

  // Past the cache time: recomputed once, however many requests arrive together.
  clock.advance(2)
  proxy.reset()
  const answers = await Promise.all(Array.from({ length: 5 }, () => price(t.cached)))
  assert.deepEqual(
    answers.map((a) => a.body),
    Array(5).fill('8'),
  )
  assert.equal(proxy.requests.length, 2, 'one computation for five concurrent requests')
})

test('an unreachable RPC is a 503 CHAIN_UNAVAILABLE, and a failure is not cached', async () => {
  clock.advance(CACHE_MS + 1)
  proxy.setDown(true)
  try {
    const res = await price(t.tkn)
    assert.equal(res.statusCode, 503, res.body)
    assert.equal(res.json().code, 'CHAIN_UNAVAILABLE')
  } finally {
    proxy.setDown(false)
  }
  await expectPrice(t.tkn, 2.01)
})
