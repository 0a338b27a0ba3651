import { bytesOf, fromBase64, subtleCrypto } from './web-crypto.ts'

export interface VerifyCallbackOptions {
  /** The raw request body, exactly as received: bytes, or the string they decode to. Never a re-serialized object. */
  body: Uint8Array | ArrayBuffer | string
  /** The `x-signature` header. */
  signature: string
  /** The SPKI PEM from GET /v2/public-key (or the integration's `public_key`), or a key imported already. */
  publicKey: string | CryptoKey
}

const imported = new Map<string, Promise<CryptoKey>>()

/**
 * Whether `signature` (the `x-signature` header: RSA-PSS, SHA-256, salt length 64, base64url) signs `body`
 * under `publicKey`. The same check as DePay's verify-signature, on Web Crypto: Node, browsers, edge
 * runtimes. Imported keys are cached per PEM.
 */
export async function verifyCallback(options: VerifyCallbackOptions): Promise<boolean> {
  const subtle = await subtleCrypto()
  const key = typeof options.publicKey === 'string' ? await importPem(subtle, options.publicKey) : options.publicKey
  let signature: Uint8Array
  try {
    signature = fromBase64(options.signature.trim())
  } catch {
    return false
  }
  return subtle.verify({ name: 'RSA-PSS', saltLength: 64 }, key, signature as BufferSource, bytesOf(options.body) as BufferSource)
}

function importPem(subtle: SubtleCrypto, pem: string): Promise<CryptoKey> {
  let key = imported.get(pem)
  if (!key) {
    const der = fromBase64(pem.replace(/-----(BEGIN|END) PUBLIC KEY-----/g, '').replace(/\s+/g, ''))
    key = subtle.importKey('spki', der as BufferSource, { name: 'RSA-PSS', hash: 'SHA-256' }, false, ['verify'])
    // A bad PEM is not remembered: the next call tries again (and fails the same way).
    key.catch(() => imported.delete(pem))
    if (imported.size >= 100) imported.delete(imported.keys().next().value!)
    imported.set(pem, key)
  }
  return key
}
