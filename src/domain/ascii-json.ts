/**
 * Compact JSON in which every character outside ASCII is written as a `\uXXXX` escape (UTF-16 code
 * units, so characters beyond the BMP become an escaped surrogate pair). The result is pure ASCII:
 * its bytes, its UTF-8 reading and its one-byte-per-character reading (how DePay's verifier turns
 * the body into bytes) are the same, so a signature over it verifies however the receiver reads it.
 */
export function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(nonAscii, escapeUnit)
}

const nonAscii = /[\u0080-\uffff]/g
const escapeUnit = (unit: string): string => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`
