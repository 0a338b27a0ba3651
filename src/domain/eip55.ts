/**
 * EIP-55 checksummed addresses, for every address a record shows (up to four per record). viem's
 * `getAddress` costs ~16 µs per address it has not seen lately (a generic Keccak with allocations, behind
 * an LRU), and a callback's sender usually is one: replacing it took a callback's event-loop CPU from
 * 0.224 to 0.185 ms. Here one Keccak-f[1600] permutation (the 40 hex characters fit one block) on a reused
 * state, ~4 µs, and a small cache for the receivers and tokens that recur.
 */

/** Keccak-f[1600] round constants, as (low, high) 32-bit halves. */
// biome-ignore format: the table is laid out eight constants a line
const ROUND_LOW = new Int32Array([
  0x00000001, 0x00008082, 0x0000808a, 0x80008000, 0x0000808b, 0x80000001, 0x80008081, 0x00008009,
  0x0000008a, 0x00000088, 0x80008009, 0x8000000a, 0x8000808b, 0x0000008b, 0x00008089, 0x00008003,
  0x00008002, 0x00000080, 0x0000800a, 0x8000000a, 0x80008081, 0x00008080, 0x80000001, 0x80008008,
])
// biome-ignore format: the table is laid out eight constants a line
const ROUND_HIGH = new Int32Array([
  0x00000000, 0x00000000, 0x80000000, 0x80000000, 0x00000000, 0x00000000, 0x80000000, 0x80000000,
  0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x80000000, 0x80000000, 0x80000000,
  0x80000000, 0x80000000, 0x00000000, 0x80000000, 0x80000000, 0x80000000, 0x00000000, 0x80000000,
])
// Lanes as 32-bit halves: low word at 2 * lane, high word at 2 * lane + 1 (lane = x + 5y).
const state = new Int32Array(50)

/**
 * Keccak-f[1600], unrolled over the 25 lanes held in locals (a loop over typed arrays took ~8 µs a
 * permutation, this ~2 µs). Lane a{x+5y}; rho and pi move lane x + 5y, rotated by its rho offset, to
 * b{y + 5((2x + 3y) mod 5)}; chi combines each row's b lanes.
 */
// biome-ignore format: the unrolled rounds are laid out lane pairs a line, to be read against the comment above
function permute(): void {
  let
    a0l = state[0]!, a0h = state[1]!, a1l = state[2]!, a1h = state[3]!, a2l = state[4]!, a2h = state[5]!,
    a3l = state[6]!, a3h = state[7]!, a4l = state[8]!, a4h = state[9]!, a5l = state[10]!, a5h = state[11]!,
    a6l = state[12]!, a6h = state[13]!, a7l = state[14]!, a7h = state[15]!, a8l = state[16]!, a8h = state[17]!,
    a9l = state[18]!, a9h = state[19]!, a10l = state[20]!, a10h = state[21]!, a11l = state[22]!, a11h = state[23]!,
    a12l = state[24]!, a12h = state[25]!, a13l = state[26]!, a13h = state[27]!, a14l = state[28]!, a14h = state[29]!,
    a15l = state[30]!, a15h = state[31]!, a16l = state[32]!, a16h = state[33]!, a17l = state[34]!, a17h = state[35]!,
    a18l = state[36]!, a18h = state[37]!, a19l = state[38]!, a19h = state[39]!, a20l = state[40]!, a20h = state[41]!,
    a21l = state[42]!, a21h = state[43]!, a22l = state[44]!, a22h = state[45]!, a23l = state[46]!, a23h = state[47]!,
    a24l = state[48]!, a24h = state[49]!
  for (let round = 0; round < 24; round++) {
    // theta
    const c0l = a0l ^ a5l ^ a10l ^ a15l ^ a20l
    const c0h = a0h ^ a5h ^ a10h ^ a15h ^ a20h
    const c1l = a1l ^ a6l ^ a11l ^ a16l ^ a21l
    const c1h = a1h ^ a6h ^ a11h ^ a16h ^ a21h
    const c2l = a2l ^ a7l ^ a12l ^ a17l ^ a22l
    const c2h = a2h ^ a7h ^ a12h ^ a17h ^ a22h
    const c3l = a3l ^ a8l ^ a13l ^ a18l ^ a23l
    const c3h = a3h ^ a8h ^ a13h ^ a18h ^ a23h
    const c4l = a4l ^ a9l ^ a14l ^ a19l ^ a24l
    const c4h = a4h ^ a9h ^ a14h ^ a19h ^ a24h
    const d0l = c4l ^ ((c1l << 1) | (c1h >>> 31))
    const d0h = c4h ^ ((c1h << 1) | (c1l >>> 31))
    const d1l = c0l ^ ((c2l << 1) | (c2h >>> 31))
    const d1h = c0h ^ ((c2h << 1) | (c2l >>> 31))
    const d2l = c1l ^ ((c3l << 1) | (c3h >>> 31))
    const d2h = c1h ^ ((c3h << 1) | (c3l >>> 31))
    const d3l = c2l ^ ((c4l << 1) | (c4h >>> 31))
    const d3h = c2h ^ ((c4h << 1) | (c4l >>> 31))
    const d4l = c3l ^ ((c0l << 1) | (c0h >>> 31))
    const d4h = c3h ^ ((c0h << 1) | (c0l >>> 31))
    a0l ^= d0l; a0h ^= d0h
    a1l ^= d1l; a1h ^= d1h
    a2l ^= d2l; a2h ^= d2h
    a3l ^= d3l; a3h ^= d3h
    a4l ^= d4l; a4h ^= d4h
    a5l ^= d0l; a5h ^= d0h
    a6l ^= d1l; a6h ^= d1h
    a7l ^= d2l; a7h ^= d2h
    a8l ^= d3l; a8h ^= d3h
    a9l ^= d4l; a9h ^= d4h
    a10l ^= d0l; a10h ^= d0h
    a11l ^= d1l; a11h ^= d1h
    a12l ^= d2l; a12h ^= d2h
    a13l ^= d3l; a13h ^= d3h
    a14l ^= d4l; a14h ^= d4h
    a15l ^= d0l; a15h ^= d0h
    a16l ^= d1l; a16h ^= d1h
    a17l ^= d2l; a17h ^= d2h
    a18l ^= d3l; a18h ^= d3h
    a19l ^= d4l; a19h ^= d4h
    a20l ^= d0l; a20h ^= d0h
    a21l ^= d1l; a21h ^= d1h
    a22l ^= d2l; a22h ^= d2h
    a23l ^= d3l; a23h ^= d3h
    a24l ^= d4l; a24h ^= d4h
    // rho and pi
    const b0l = a0l, b0h = a0h
    const b10l = (a1l << 1) | (a1h >>> 31), b10h = (a1h << 1) | (a1l >>> 31)
    const b20l = (a2h << 30) | (a2l >>> 2), b20h = (a2l << 30) | (a2h >>> 2)
    const b5l = (a3l << 28) | (a3h >>> 4), b5h = (a3h << 28) | (a3l >>> 4)
    const b15l = (a4l << 27) | (a4h >>> 5), b15h = (a4h << 27) | (a4l >>> 5)
    const b16l = (a5h << 4) | (a5l >>> 28), b16h = (a5l << 4) | (a5h >>> 28)
    const b1l = (a6h << 12) | (a6l >>> 20), b1h = (a6l << 12) | (a6h >>> 20)
    const b11l = (a7l << 6) | (a7h >>> 26), b11h = (a7h << 6) | (a7l >>> 26)
    const b21l = (a8h << 23) | (a8l >>> 9), b21h = (a8l << 23) | (a8h >>> 9)
    const b6l = (a9l << 20) | (a9h >>> 12), b6h = (a9h << 20) | (a9l >>> 12)
    const b7l = (a10l << 3) | (a10h >>> 29), b7h = (a10h << 3) | (a10l >>> 29)
    const b17l = (a11l << 10) | (a11h >>> 22), b17h = (a11h << 10) | (a11l >>> 22)
    const b2l = (a12h << 11) | (a12l >>> 21), b2h = (a12l << 11) | (a12h >>> 21)
    const b12l = (a13l << 25) | (a13h >>> 7), b12h = (a13h << 25) | (a13l >>> 7)
    const b22l = (a14h << 7) | (a14l >>> 25), b22h = (a14l << 7) | (a14h >>> 25)
    const b23l = (a15h << 9) | (a15l >>> 23), b23h = (a15l << 9) | (a15h >>> 23)
    const b8l = (a16h << 13) | (a16l >>> 19), b8h = (a16l << 13) | (a16h >>> 19)
    const b18l = (a17l << 15) | (a17h >>> 17), b18h = (a17h << 15) | (a17l >>> 17)
    const b3l = (a18l << 21) | (a18h >>> 11), b3h = (a18h << 21) | (a18l >>> 11)
    const b13l = (a19l << 8) | (a19h >>> 24), b13h = (a19h << 8) | (a19l >>> 24)
    const b14l = (a20l << 18) | (a20h >>> 14), b14h = (a20h << 18) | (a20l >>> 14)
    const b24l = (a21l << 2) | (a21h >>> 30), b24h = (a21h << 2) | (a21l >>> 30)
    const b9l = (a22h << 29) | (a22l >>> 3), b9h = (a22l << 29) | (a22h >>> 3)
    const b19l = (a23h << 24) | (a23l >>> 8), b19h = (a23l << 24) | (a23h >>> 8)
    const b4l = (a24l << 14) | (a24h >>> 18), b4h = (a24h << 14) | (a24l >>> 18)
    // chi
    a0l = b0l ^ (~b1l & b2l); a0h = b0h ^ (~b1h & b2h)
    a1l = b1l ^ (~b2l & b3l); a1h = b1h ^ (~b2h & b3h)
    a2l = b2l ^ (~b3l & b4l); a2h = b2h ^ (~b3h & b4h)
    a3l = b3l ^ (~b4l & b0l); a3h = b3h ^ (~b4h & b0h)
    a4l = b4l ^ (~b0l & b1l); a4h = b4h ^ (~b0h & b1h)
    a5l = b5l ^ (~b6l & b7l); a5h = b5h ^ (~b6h & b7h)
    a6l = b6l ^ (~b7l & b8l); a6h = b6h ^ (~b7h & b8h)
    a7l = b7l ^ (~b8l & b9l); a7h = b7h ^ (~b8h & b9h)
    a8l = b8l ^ (~b9l & b5l); a8h = b8h ^ (~b9h & b5h)
    a9l = b9l ^ (~b5l & b6l); a9h = b9h ^ (~b5h & b6h)
    a10l = b10l ^ (~b11l & b12l); a10h = b10h ^ (~b11h & b12h)
    a11l = b11l ^ (~b12l & b13l); a11h = b11h ^ (~b12h & b13h)
    a12l = b12l ^ (~b13l & b14l); a12h = b12h ^ (~b13h & b14h)
    a13l = b13l ^ (~b14l & b10l); a13h = b13h ^ (~b14h & b10h)
    a14l = b14l ^ (~b10l & b11l); a14h = b14h ^ (~b10h & b11h)
    a15l = b15l ^ (~b16l & b17l); a15h = b15h ^ (~b16h & b17h)
    a16l = b16l ^ (~b17l & b18l); a16h = b16h ^ (~b17h & b18h)
    a17l = b17l ^ (~b18l & b19l); a17h = b17h ^ (~b18h & b19h)
    a18l = b18l ^ (~b19l & b15l); a18h = b18h ^ (~b19h & b15h)
    a19l = b19l ^ (~b15l & b16l); a19h = b19h ^ (~b15h & b16h)
    a20l = b20l ^ (~b21l & b22l); a20h = b20h ^ (~b21h & b22h)
    a21l = b21l ^ (~b22l & b23l); a21h = b21h ^ (~b22h & b23h)
    a22l = b22l ^ (~b23l & b24l); a22h = b22h ^ (~b23h & b24h)
    a23l = b23l ^ (~b24l & b20l); a23h = b23h ^ (~b24h & b20h)
    a24l = b24l ^ (~b20l & b21l); a24h = b24h ^ (~b20h & b21h)
    // iota
    a0l ^= ROUND_LOW[round]!
    a0h ^= ROUND_HIGH[round]!
  }
  state[0] = a0l; state[1] = a0h; state[2] = a1l; state[3] = a1h; state[4] = a2l; state[5] = a2h
  state[6] = a3l; state[7] = a3h; state[8] = a4l; state[9] = a4h; state[10] = a5l; state[11] = a5h
  state[12] = a6l; state[13] = a6h; state[14] = a7l; state[15] = a7h; state[16] = a8l; state[17] = a8h
  state[18] = a9l; state[19] = a9h; state[20] = a10l; state[21] = a10h; state[22] = a11l; state[23] = a11h
  state[24] = a12l; state[25] = a12h; state[26] = a13l; state[27] = a13h; state[28] = a14l; state[29] = a14h
  state[30] = a15l; state[31] = a15h; state[32] = a16l; state[33] = a16h; state[34] = a17l; state[35] = a17h
  state[36] = a18l; state[37] = a18h; state[38] = a19l; state[39] = a19h; state[40] = a20l; state[41] = a20h
  state[42] = a21l; state[43] = a21h; state[44] = a22l; state[45] = a22h; state[46] = a23l; state[47] = a23h
  state[48] = a24l; state[49] = a24h
}

const text = Buffer.alloc(42, '0x')

/** The checksummed form of a lower-case address: a letter is upper-case where its hash nibble is ≥ 8. */
function checksummed(lower: string): string {
  state.fill(0)
  // The hex characters as Keccak-256's one input block: little-endian into the words, then the padding.
  for (let i = 0; i < 40; i++) state[i >> 2] = state[i >> 2]! | (lower.charCodeAt(i + 2) << ((i & 3) * 8))
  state[10] = 0x01 // Keccak's padding (not SHA-3's) after byte 39
  state[33] = 0x80000000 // the last byte of the 136-byte block
  permute()
  for (let i = 0; i < 40; i++) {
    const byte = state[i >> 3]! >>> (((i >> 1) & 3) * 8)
    const nibble = i & 1 ? byte & 0x0f : (byte >> 4) & 0x0f
    const code = lower.charCodeAt(i + 2)
    text[i + 2] = nibble >= 8 && code >= 0x61 ? code - 0x20 : code
  }
  return text.toString('latin1', 0, 42)
}

/** Entries per cache generation: the last 4,096 to 8,192 distinct addresses are kept. */
const GENERATION = 4096
let current = new Map<string, string>()
let previous = new Map<string, string>()

/** The EIP-55 form of a 0x-prefixed 20-byte hex address (any case in, checksummed out). */
export function checksumAddress(address: string): string {
  const lower = address.toLowerCase()
  let result = current.get(lower)
  if (result !== undefined) return result
  result = previous.get(lower) ?? checksummed(lower)
  if (current.size >= GENERATION) {
    previous = current
    current = new Map()
  }
  current.set(lower, result)
  return result
}
