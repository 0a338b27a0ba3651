import { bytesOf, fromBase64, subtleCrypto } from './web-crypto.ts'

export interface VerifyWebhookOptions {
  /** The raw request body, exactly as received (bytes or string). */
  body: Uint8Array | ArrayBuffer | string
  /** The request headers: a `Headers` or an object of lower-case names (Node's `request.headers`). */
  headers: Headers | Record<string, string | string[] | undefined>
  /** The `whsec_…` secret of the integration or account. */
  secret: string
  /** Seconds a timestamp may be away from now (default 300, as Standard Webhooks says). */
  toleranceSeconds?: number
  /** Now, in milliseconds (tests). */
  now?: number
}

/**
 * Whether the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`) sign `body`
 * under `secret`: HMAC-SHA256 of `{id}.{timestamp}.{body}`, any of the space-separated `v1,` signatures
 * (two while a rotated secret still signs), a timestamp within 5 minutes of now. Web Crypto: Node,
 * browsers, edge runtimes; the comparison is the platform's `verify`.
 */
export async function verifyWebhook(options: VerifyWebhookOptions): Promise<boolean> {
  const id = header(options.headers, 'webhook-id')
  const timestamp = header(options.headers, 'webhook-timestamp')
  const signatures = header(options.headers, 'webhook-signature')
  if (!id || !timestamp || !signatures || !/^\d+$/.test(timestamp)) return false
  const now = Math.floor((options.now ?? Date.now()) / 1000)
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300)) return false

  const subtle = await subtleCrypto()
  let secret: Uint8Array
  try {
    secret = fromBase64(options.secret.startsWith('whsec_') ? options.secret.slice(6) : options.secret)
  } catch {
    return false
  }
  const key = await subtle.importKey('raw', secret as BufferSource, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify'])
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`)
  const body = bytesOf(options.body)
  const signed = new Uint8Array(prefix.length + body.length)
  signed.set(prefix)
  signed.set(body, prefix.length)
  for (const entry of signatures.split(' ')) {
    const [version, value] = entry.split(',', 2)
    if (version !== 'v1' || !value) continue
    let mac: Uint8Array
    try {
      mac = fromBase64(value)
    } catch {
      continue
    }
    if (await subtle.verify('HMAC', key, mac as BufferSource, signed as BufferSource)) return true
  }
  return false
}

function header(headers: VerifyWebhookOptions['headers'], name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined
  const value = (headers as Record<string, string | string[] | undefined>)[name]
  return Array.isArray(value) ? value[0] : value
}
