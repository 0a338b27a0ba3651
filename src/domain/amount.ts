/** Exact decimal amounts: human-readable strings on the outside, base-unit bigints inside. */

const decimalPattern = /^(\d+)(?:\.(\d+))?$/

/**
 * An amount that is not one (the caller's input, answered as a validation error). Stays on `Error`:
 * the domain layer sits below common/ (docs: layer order domain → config → common) and imports
 * nothing of the service, and an input's error is never retried, so it needs no retry type.
 */
export class AmountError extends Error {
  override name = 'AmountError'
}

/** Canonical form of a non-negative decimal string: no exponent, no leading or trailing zeros. */
export function canonicalDecimal(input: string): string {
  const match = decimalPattern.exec(input)
  if (!match) throw new AmountError('must be a non-negative decimal number such as "1.5"')
  const whole = match[1]!.replace(/^0+(?=\d)/, '')
  const fraction = (match[2] ?? '').replace(/0+$/, '')
  return fraction ? `${whole}.${fraction}` : whole
}

/** Converts a decimal string to base units; more fractional digits than `decimals` is an error. */
export function toBaseUnits(input: string, decimals: number): bigint {
  const canonical = canonicalDecimal(input)
  const [whole, fraction = ''] = canonical.split('.')
  if (fraction.length > decimals) {
    throw new AmountError(`has more than ${decimals} fractional digits (the token has ${decimals} decimals)`)
  }
  const units = BigInt(whole! + fraction.padEnd(decimals, '0'))
  // No token transfer or balance can exceed a uint256: such an amount could never be paid.
  if (units > MAX_UINT256)
    throw new AmountError(`is more than any amount of this token (over 2^256 − 1 base units at ${decimals} decimals)`)
  return units
}

const MAX_UINT256 = 2n ** 256n - 1n

/** Base units back to a canonical decimal string. */
export function fromBaseUnits(value: bigint, decimals: number): string {
  const negative = value < 0n
  const digits = (negative ? -value : value).toString().padStart(decimals + 1, '0')
  const whole = digits.slice(0, digits.length - decimals)
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '')
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`
}
