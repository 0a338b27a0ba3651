import { decodeAbiParameters, encodeFunctionData, parseAbi, size, zeroAddress, type Address, type Hex } from 'viem'
import { agreedPrice, holdsAtLeast, multiply, priceFromReserves, priceFromSqrtPriceX96, type Ratio } from '../domain/price-math.ts'
import type { BatchCall, BatchReader, BatchResult } from './batch-reader.ts'
import { balanceOfCall, decimalsCall, decodeDecimals, decodeUint } from './erc20-calls.ts'
import type { ChainHandle } from './registry.ts'

/** A pool only counts when it holds at least this much of its quote side (docs/api.md §5). */
const MIN_STABLECOIN_LIQUIDITY = 1000n
const MIN_WRAPPED_LIQUIDITY = 1n

const factoryAbi = parseAbi(['function getPair(address tokenA, address tokenB) view returns (address pair)'])
const pairAbi = parseAbi(['function getReserves() view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast)'])
const v3PoolAbi = parseAbi([
  'function token0() view returns (address)',
  'function token1() view returns (address)',
  // Only the first word (sqrtPriceX96) is read, so forks with other slot0 layouts work too.
  'function slot0() view returns (uint160 sqrtPriceX96)',
])

/** What never changes on a chain: token decimals and the two tokens of each configured V3 pool. */
export interface ChainPriceFacts {
  decimals: Map<string, number>
  v3Tokens: Map<string, readonly [Address, Address]>
}

export const newChainPriceFacts = (): ChainPriceFacts => ({ decimals: new Map(), v3Tokens: new Map() })

interface Pool {
  kind: 'v2' | 'v3'
  address: Address
  base: Address
  quote: Address
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()
const call = (to: Address, data: Hex): BatchCall => ({ to, data })

/**
 * The USD price of one whole `token` from on-chain pools, exactly, or null without a usable route.
 * Two batched round trips: (1) pair addresses, decimals and V3 pool tokens, (2) reserves and prices.
 * Quotes: every pool of `token` against a stablecoin, and every pool of `token` against the wrapped
 * native token times the wrapped token's own USD price (agreed from its stablecoin pools).
 */
export async function readUsdPrice(chain: ChainHandle, reader: BatchReader, facts: ChainPriceFacts, token: Address): Promise<Ratio | null> {
  const { wrapped, uniswapV2Factories, uniswapV3Pools } = chain.config
  const stablecoins = chain.config.stablecoins.filter((s, i, all) => all.findIndex((o) => same(o, s)) === i)
  const viaWrapped = wrapped !== null && !same(wrapped, token)
  const legs: [Address, Address][] = stablecoins.map((stable) => [token, stable])
  if (viaWrapped) legs.push([token, wrapped], ...stablecoins.map((stable): [Address, Address] => [wrapped, stable]))

  // Round 1: what is needed to know which pools exist.
  const needDecimals = [token, ...(wrapped ? [wrapped] : []), ...stablecoins].filter((t) => !facts.decimals.has(t.toLowerCase()))
  const pairLookups = uniswapV2Factories.flatMap((factory) => legs.map(([base, quote]) => ({ factory, base, quote })))
  const unknownV3 = uniswapV3Pools.filter((pool) => !facts.v3Tokens.has(pool.toLowerCase()))
  const first = await reader.read([
    ...needDecimals.map(decimalsCall),
    ...pairLookups.map(({ factory, base, quote }) =>
      call(factory, encodeFunctionData({ abi: factoryAbi, functionName: 'getPair', args: [base, quote] })),
    ),
    ...unknownV3.flatMap((pool) => [
      call(pool, encodeFunctionData({ abi: v3PoolAbi, functionName: 'token0' })),
      call(pool, encodeFunctionData({ abi: v3PoolAbi, functionName: 'token1' })),
    ]),
  ])
  let at = 0
  for (const t of needDecimals) {
    const decimals = decodeDecimals(first[at++])
    if (decimals !== undefined) facts.decimals.set(t.toLowerCase(), decimals)
  }
  const pools: Pool[] = []
  for (const lookup of pairLookups) {
    const pair = decodeAddress(first[at++])
    if (pair && pair !== zeroAddress) pools.push({ kind: 'v2', address: pair, base: lookup.base, quote: lookup.quote })
  }
  for (const pool of unknownV3) {
    const token0 = decodeAddress(first[at++])
    const token1 = decodeAddress(first[at++])
    if (token0 && token1) facts.v3Tokens.set(pool.toLowerCase(), [token0, token1])
  }
  for (const pool of uniswapV3Pools) {
    const pair = facts.v3Tokens.get(pool.toLowerCase())
    const leg = pair && legs.find(([a, b]) => (same(a, pair[0]) && same(b, pair[1])) || (same(a, pair[1]) && same(b, pair[0])))
    if (leg) pools.push({ kind: 'v3', address: pool, base: leg[0], quote: leg[1] })
  }
  const decimalsOf = (t: Address) => facts.decimals.get(t.toLowerCase())
  if (decimalsOf(token) === undefined || pools.length === 0) return null

  // Round 2: reserves (V2), price and quote-side balance (V3).
  const second = await reader.read(
    pools.flatMap((pool) =>
      pool.kind === 'v2'
        ? [call(pool.address, encodeFunctionData({ abi: pairAbi, functionName: 'getReserves' }))]
        : [call(pool.address, encodeFunctionData({ abi: v3PoolAbi, functionName: 'slot0' })), balanceOfCall(pool.quote, pool.address)],
    ),
  )
  at = 0
  const priced = pools.map((pool) => {
    const results = pool.kind === 'v2' ? [second[at++]] : [second[at++], second[at++]]
    return { pool, price: poolPrice(pool, results, decimalsOf(pool.base), decimalsOf(pool.quote), stablecoins) }
  })
  const pricesOf = (base: Address, quoteIsStable: boolean) =>
    priced
      .filter(({ pool, price }) => price && same(pool.base, base) && stablecoins.some((s) => same(s, pool.quote)) === quoteIsStable)
      .map(({ price }) => price!)

  const quotes = pricesOf(token, true)
  if (viaWrapped) {
    const wrappedUsd = agreedPrice(pricesOf(wrapped, true))
    if (wrappedUsd) quotes.push(...pricesOf(token, false).map((inWrapped) => multiply(inWrapped, wrappedUsd)))
  }
  return agreedPrice(quotes)
}

/** One pool's price of its base in its quote, or null when unreadable or below the liquidity floor. */
function poolPrice(
  pool: Pool,
  results: (BatchResult | undefined)[],
  baseDecimals: number | undefined,
  quoteDecimals: number | undefined,
  stablecoins: Address[],
): Ratio | null {
  if (baseDecimals === undefined || quoteDecimals === undefined) return null
  const minimum = stablecoins.some((s) => same(s, pool.quote)) ? MIN_STABLECOIN_LIQUIDITY : MIN_WRAPPED_LIQUIDITY
  const baseIsToken0 = pool.base.toLowerCase() < pool.quote.toLowerCase()
  if (pool.kind === 'v2') {
    const reserves = decodeReserves(results[0])
    if (!reserves) return null
    const [reserveBase, reserveQuote] = baseIsToken0 ? reserves : [reserves[1], reserves[0]]
    if (!holdsAtLeast(reserveQuote, quoteDecimals, minimum)) return null
    return priceFromReserves(reserveBase, baseDecimals, reserveQuote, quoteDecimals)
  }
  const sqrtPriceX96 = decodeUint(results[0])
  const quoteHeld = decodeUint(results[1])
  if (sqrtPriceX96 === undefined || quoteHeld === undefined || !holdsAtLeast(quoteHeld, quoteDecimals, minimum)) return null
  return priceFromSqrtPriceX96(sqrtPriceX96, baseIsToken0, baseDecimals, quoteDecimals)
}

function decodeAddress(result: BatchResult | undefined): Address | undefined {
  if (!result?.ok || size(result.data) < 32) return undefined
  try {
    return decodeAbiParameters([{ type: 'address' }], result.data)[0]
  } catch {
    return undefined
  }
}

function decodeReserves(result: BatchResult | undefined): readonly [bigint, bigint] | undefined {
  if (!result?.ok || size(result.data) < 64) return undefined
  const [reserve0, reserve1] = decodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }], result.data)
  return [reserve0, reserve1]
}
