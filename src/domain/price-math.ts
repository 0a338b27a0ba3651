/**
 * Exact price arithmetic: every price is a fraction of two bigints until the single conversion to a
 * JSON number at the very end, so reserves of any size and any token decimals lose nothing on the way.
 */

/** A non-negative fraction `num / den` with `den > 0`. */
export interface Ratio {
  num: bigint
  den: bigint
}

export const ratio = (num: bigint, den: bigint = 1n): Ratio => {
  if (den === 0n) throw new RangeError('ratio with a zero denominator')
  return den < 0n ? { num: -num, den: -den } : { num, den }
}

export const multiply = (a: Ratio, b: Ratio): Ratio => ratio(a.num * b.num, a.den * b.den)

/** Negative, zero or positive as `a` is below, equal to or above `b`. */
export const compare = (a: Ratio, b: Ratio): number => {
  const left = a.num * b.den
  const right = b.num * a.den
  return left < right ? -1 : left > right ? 1 : 0
}

const add = (a: Ratio, b: Ratio): Ratio => ratio(a.num * b.den + b.num * a.den, a.den * b.den)

function mean(values: Ratio[]): Ratio {
  const sum = values.reduce(add, ratio(0n))
  return ratio(sum.num, sum.den * BigInt(values.length))
}

/** The middle value; for an even count the mean of the two middle values. */
export function median(values: Ratio[]): Ratio {
  if (values.length === 0) throw new RangeError('median of nothing')
  const sorted = [...values].sort(compare)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : mean([sorted[middle - 1]!, sorted[middle]!])
}

/**
 * The price agreed by several quotes: quotes more than `tolerance` (default 10%) away from the median
 * are dropped as outliers (a manipulated or stale pool) and the rest averaged. When no quote is close
 * to the median (two quotes far apart) the median itself is the answer. Null when there is no quote.
 */
export function agreedPrice(quotes: Ratio[], tolerance: Ratio = ratio(1n, 10n)): Ratio | null {
  if (quotes.length === 0) return null
  const middle = median(quotes)
  // |q - m| <= tolerance * m, cross-multiplied so that it stays exact.
  const close = quotes.filter((q) => {
    const distance = q.num * middle.den - middle.num * q.den
    const absolute = distance < 0n ? -distance : distance
    return absolute * tolerance.den <= tolerance.num * middle.num * q.den
  })
  return close.length > 0 ? mean(close) : middle
}

/**
 * Price of one whole base token in whole quote tokens from a constant-product pool's reserves
 * (Uniswap V2 style): (reserveQuote / 10^quoteDecimals) / (reserveBase / 10^baseDecimals).
 * Null when the base reserve is empty.
 */
export function priceFromReserves(reserveBase: bigint, baseDecimals: number, reserveQuote: bigint, quoteDecimals: number): Ratio | null {
  if (reserveBase <= 0n || reserveQuote < 0n) return null
  return ratio(reserveQuote * 10n ** BigInt(baseDecimals), reserveBase * 10n ** BigInt(quoteDecimals))
}

const Q192 = 2n ** 192n

/**
 * Price of one whole base token in whole quote tokens from a Uniswap V3 pool's `sqrtPriceX96`,
 * which encodes sqrt(token1 / token0) in base units as a Q64.96 number. Null for an uninitialised pool.
 */
export function priceFromSqrtPriceX96(
  sqrtPriceX96: bigint,
  baseIsToken0: boolean,
  baseDecimals: number,
  quoteDecimals: number,
): Ratio | null {
  if (sqrtPriceX96 <= 0n) return null
  const token1PerToken0 = ratio(sqrtPriceX96 * sqrtPriceX96, Q192)
  const raw = baseIsToken0 ? token1PerToken0 : ratio(token1PerToken0.den, token1PerToken0.num)
  return multiply(raw, ratio(10n ** BigInt(baseDecimals), 10n ** BigInt(quoteDecimals)))
}

/** True when a pool holds at least `minimumWhole` whole tokens of a token with `decimals`. */
export const holdsAtLeast = (reserve: bigint, decimals: number, minimumWhole: bigint): boolean =>
  reserve >= minimumWhole * 10n ** BigInt(decimals)

const SIGNIFICANT_DIGITS = 20

/** The one lossy step: the fraction as the nearest JSON number (from 20 exact significant digits). */
export function ratioToNumber(value: Ratio): number {
  if (value.num === 0n) return 0
  const negative = value.num < 0n
  const num = negative ? -value.num : value.num
  // Scale so that the integer quotient has at least SIGNIFICANT_DIGITS digits.
  const shift = Math.max(0, SIGNIFICANT_DIGITS - (num.toString().length - value.den.toString().length))
  const digits = ((num * 10n ** BigInt(shift)) / value.den).toString().padStart(shift + 1, '0')
  const whole = digits.slice(0, digits.length - shift)
  const fraction = digits.slice(digits.length - shift)
  return Number(`${negative ? '-' : ''}${whole}.${fraction || '0'}`)
}
