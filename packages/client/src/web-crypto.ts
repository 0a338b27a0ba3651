/** WebCrypto where the runtime has it globally (Node 19+, browsers, edge), else Node 18's `node:crypto` one. */
export async function subtleCrypto(): Promise<SubtleCrypto> {
  const global = (globalThis as { crypto?: Crypto }).crypto
  if (global?.subtle) return global.subtle
  // A specifier in a variable: browser bundlers leave it alone (they never reach this line).
  const nodeCrypto = 'node:crypto'
  const { webcrypto } = (await import(nodeCrypto)) as { webcrypto: Crypto }
  return webcrypto.subtle
}

/** Bytes of a body given as bytes or as the string they decode to (UTF-8). */
export function bytesOf(body: Uint8Array | ArrayBuffer | string): Uint8Array {
  if (typeof body === 'string') return new TextEncoder().encode(body)
  return body instanceof Uint8Array ? body : new Uint8Array(body)
}

/** Decodes base64 or base64url, padded or not; throws on any other character. */
export function fromBase64(text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(text)) throw new Error('not base64')
  const standard = text.replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '')
  const binary = atob(standard + '='.repeat((4 - (standard.length % 4)) % 4))
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}
