import { constants, createHash, createPrivateKey, createPublicKey, generateKeyPair, sign, type KeyObject } from 'node:crypto'
import type { Db } from '../store/infrastructure/database.ts'
import { integrationPrivateKey } from '../store/integrations.ts'
import { serviceKeyPair, type KeyPairPem } from '../store/service-keys.ts'
import { NonRetryableError } from '../common/errors.ts'

/** Name of the service's default callback-signing key in `service_keys`. */
export const SERVICE_SIGNING_KEY = 'callback-signing'

/** A signing key that cannot be used (bad PEM, not RSA); its message names where it came from. */
export class SigningKeyError extends NonRetryableError {
  override name = 'SigningKeyError'
  override readonly code = 'SIGNING_KEY_INVALID'
}

/** A fresh RSA-2048 pair as PEM: PKCS#8 private, SPKI public. Generated on the libuv pool. */
export async function generateRsaKeyPair(): Promise<KeyPairPem> {
  return new Promise((resolve, reject) => {
    generateKeyPair(
      'rsa',
      {
        modulusLength: 2048,
        publicKeyEncoding: { type: 'spki', format: 'pem' },
        privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      },
      (error, publicKeyPem, privateKeyPem) => (error ? reject(error) : resolve({ privateKeyPem, publicKeyPem })),
    )
  })
}

export function parseRsaPrivateKey(pem: string, source: string): KeyObject {
  let key: KeyObject
  try {
    key = createPrivateKey(pem)
  } catch (error) {
    throw new SigningKeyError(`${source}: not a readable PEM private key (${(error as Error).message})`)
  }
  if (key.asymmetricKeyType !== 'rsa') throw new SigningKeyError(`${source}: must be an RSA key, got ${key.asymmetricKeyType}`)
  return key
}

export const spkiPem = (key: KeyObject): string => createPublicKey(key).export({ type: 'spki', format: 'pem' }) as string

/**
 * RSA-PSS, SHA-256, MGF1-SHA-256, salt length 64 (docs/api.md §4). With a callback, node:crypto signs
 * on the libuv thread pool, so signing never blocks the event loop.
 */
export function signPss(key: KeyObject, data: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // Node 24 probes the options object as a KeyObject and then as a CryptoKey before reading its
    // `key`; each failed probe builds a TypeError (caught inside node:crypto) with a captured stack,
    // ~55 µs of event loop per signature, a quarter of a callback's main-thread cost. Without stack
    // frames they cost a fraction. The call is synchronous, so no other code runs under the limit.
    const stackTraceLimit = Error.stackTraceLimit
    Error.stackTraceLimit = 0
    try {
      sign('sha256', data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 64 }, (error, signature) =>
        error ? reject(error) : resolve(signature),
      )
    } catch (error) {
      reject(error as Error)
    } finally {
      Error.stackTraceLimit = stackTraceLimit
    }
  })
}

/** base64 with the URL-safe alphabet, with padding (docs/api.md §4). */
export const base64UrlPadded = (bytes: Buffer): string => bytes.toString('base64').replace(/\+/g, '-').replace(/\//g, '_')

export interface CallbackSigner {
  /** SPKI PEM of the service key, served at GET /v2/public-key. */
  readonly servicePublicKeyPem: string
  /** The `x-signature` of `body`: with the integration's key when given, else the service key. */
  sign(body: string, integrationId: string | null): Promise<string>
  /**
   * The same, remembering recent signatures: a record read again unchanged (polling) gets the
   * signature made for it before, instead of another RSA operation. Any valid signature verifies.
   */
  signCached(body: string, integrationId: string | null): Promise<string>
}

const SIGNATURE_CACHE_SIZE = 10_000

/**
 * The service key comes from PAYWATCH_SIGNING_KEY or is generated once and stored in the database
 * (shared by every node), sealed under `secretsKey` when set. Integration keys are read (and opened)
 * on first use and kept: they never change, and no callback pays for a decryption.
 */
export async function createCallbackSigner(
  db: Db,
  configuredPem: string | null,
  secretsKey: Buffer | null = null,
): Promise<CallbackSigner> {
  const serviceKey = configuredPem
    ? parseRsaPrivateKey(configuredPem, 'PAYWATCH_SIGNING_KEY')
    : parseRsaPrivateKey(
        (await serviceKeyPair(db, SERVICE_SIGNING_KEY, generateRsaKeyPair, secretsKey)).privateKeyPem,
        `service_keys.${SERVICE_SIGNING_KEY}`,
      )
  const integrationKeys = new Map<string, Promise<KeyObject>>()

  const integrationKey = (id: string): Promise<KeyObject> => {
    let key = integrationKeys.get(id)
    if (!key) {
      key = integrationPrivateKey(db, id, secretsKey).then((pem) => {
        if (!pem) throw new SigningKeyError(`integration ${id} has no key`)
        return parseRsaPrivateKey(pem, `integration ${id}`)
      })
      key.catch(() => integrationKeys.delete(id))
      integrationKeys.set(id, key)
    }
    return key
  }

  const signBody = async (body: string, integrationId: string | null): Promise<string> => {
    const key = integrationId ? await integrationKey(integrationId) : serviceKey
    return base64UrlPadded(await signPss(key, Buffer.from(body, 'utf8')))
  }
  const recent = new Map<string, Promise<string>>()

  return {
    servicePublicKeyPem: spkiPem(serviceKey),
    sign: signBody,
    signCached(body, integrationId) {
      const cacheKey = `${integrationId ?? ''}:${createHash('sha256').update(body).digest('base64')}`
      let signature = recent.get(cacheKey)
      if (signature) {
        // Most recently used last: the first entry is the one to drop.
        recent.delete(cacheKey)
      } else {
        signature = signBody(body, integrationId)
        signature.catch(() => recent.delete(cacheKey))
        if (recent.size >= SIGNATURE_CACHE_SIZE) recent.delete(recent.keys().next().value!)
      }
      recent.set(cacheKey, signature)
      return signature
    },
  }
}
