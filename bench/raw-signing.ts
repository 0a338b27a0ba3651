// The machine's raw async RSA-PSS signing rate: what every signed callback and every freshly signed
// GET answer costs at least, measured in the same run as the figures it bounds.
import type { KeyObject } from 'node:crypto'
import { signPss } from '../src/callbacks/signer.ts'

/** Signatures per second with `count` signatures in flight at once (node:crypto on the libuv pool, every core busy). */
export async function rawSigningRate(key: KeyObject, body: Buffer, count: number): Promise<number> {
  const start = performance.now()
  await Promise.all(Array.from({ length: count }, () => signPss(key, body)))
  return count / ((performance.now() - start) / 1000)
}
