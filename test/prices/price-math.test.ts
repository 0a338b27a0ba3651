import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  agreedPrice,
  compare,
  holdsAtLeast,
  median,
  priceFromReserves,
  priceFromSqrtPriceX96,
  ratio,
  ratioToNumber,
  type Ratio,
} from '../../src/domain/price-math.ts'

const n = (r: Ratio | null) => (r === null ? null : ratioToNumber(r))
const dec = (whole: string, fraction: string) => ratio(BigInt(whole + fraction), 10n ** BigInt(fraction.length))

test('reserves give the price of one whole base token across different decimals', () => {
  // 1,000 TKN (18 decimals) against 2,000 USDC (6 decimals)
  assert.equal(n(priceFromReserves(1000n * 10n ** 18n, 18, 2000n * 10n ** 6n, 6)), 2)
  // 2 WETH against 1,000 TKN: one WETH is 500 TKN, one TKN is 0.002 WETH
  assert.equal(n(priceFromReserves(2n * 10n ** 18n, 18, 1000n * 10n ** 18n, 18)), 500)
  assert.equal(n(priceFromReserves(1000n * 10n ** 18n, 18, 2n * 10n ** 18n, 18)), 0.002)
  assert.equal(priceFromReserves(0n, 18, 5n, 6), null, 'an empty pool has no price')
})

test('sqrtPriceX96 gives the same prices for either token order', () => {
  const Q96 = 2n ** 96n
  // token0 USDC (6), token1 WETH (18), 1 WETH = 2,500 USDC: token1/token0 in base units = 1e18 / 2.5e9 = 4e8
  const sqrt = Q96 * 20000n // sqrt(4e8) = 2e4
  assert.equal(n(priceFromSqrtPriceX96(sqrt, false, 18, 6)), 2500, 'WETH in USDC (WETH is token1)')
  assert.equal(n(priceFromSqrtPriceX96(sqrt, true, 6, 18)), 0.0004, 'USDC in WETH (USDC is token0)')
  assert.equal(priceFromSqrtPriceX96(0n, true, 6, 18), null)
})

test('quotes more than 10% from the median are dropped and the rest averaged, exactly', () => {
  const quotes = [dec('2', '00'), dec('2', '02'), dec('3', '00')]
  assert.equal(compare(median(quotes), dec('2', '02')), 0)
  assert.equal(n(agreedPrice(quotes)), 2.01)
  // exactly 10% away is kept
  assert.equal(n(agreedPrice([ratio(100n), ratio(110n), ratio(100n)])), 310 / 3)
  // an even count takes the mean of the two middle quotes as the median
  assert.equal(n(agreedPrice([ratio(1n), ratio(10n), ratio(10n), ratio(11n)])), 31 / 3)
  // two quotes far apart: nothing is within 10% of their median, which is the answer
  assert.equal(n(agreedPrice([ratio(1n), ratio(2n)])), 1.5)
  assert.equal(agreedPrice([]), null)
})

test('liquidity floors compare whole tokens', () => {
  assert.equal(holdsAtLeast(1000n * 10n ** 6n, 6, 1000n), true)
  assert.equal(holdsAtLeast(1000n * 10n ** 6n - 1n, 6, 1000n), false)
  assert.equal(holdsAtLeast(10n ** 18n, 18, 1n), true)
})

test('the final number keeps 20 significant digits before rounding to a double', () => {
  assert.equal(ratioToNumber(ratio(1n, 3n)), 1 / 3)
  assert.equal(ratioToNumber(ratio(2n, 3n * 10n ** 30n)), Number('6.66666666666666666666666e-31'))
  assert.equal(ratioToNumber(ratio(10n ** 40n + 1n, 7n)), Number('1428571428571428571428571428571428571428.7'))
  assert.equal(ratioToNumber(ratio(0n, 9n)), 0)
  assert.equal(ratioToNumber(ratio(123456789n, 1000n)), 123456.789)
})
