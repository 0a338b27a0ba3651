import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { NonRetryableError } from '../common/errors.ts'

/**
 * Secrets the service must read back (signing keys) are stored sealed when PAYWATCH_SECRETS_KEY is
 * set: AES-256-GCM under that key, as `pwenc:v1:<iv>:<tag>:<ciphertext>` (base64). The version lets
 * the format change later; a value without the prefix is plaintext written before the key was set.
 */
const PREFIX = 'pwenc:'
const V1 = 'pwenc:v1:'

/** A sealed value that cannot be opened: no key, another key, or a damaged value. */
export class SealedSecretError extends NonRetryableError {
  override name = 'SealedSecretError'
  override readonly code: string = 'SEALED_SECRET_UNREADABLE'
}

export const isSealed = (stored: string): boolean => stored.startsWith(PREFIX)

export function seal(plain: string, key: Buffer): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
  return `${V1}${iv.toString('base64')}:${cipher.getAuthTag().toString('base64')}:${ciphertext.toString('base64')}`
}

/** The plaintext of a stored value; plaintext rows pass through unchanged. */
export function open(stored: string, key: Buffer | null): string {
  if (!isSealed(stored)) return stored
  if (!key) throw new SealedSecretError('sealed value and no key')
  const parts = stored.startsWith(V1) ? stored.slice(V1.length).split(':') : []
  if (parts.length !== 3) throw new SealedSecretError('not a pwenc:v1 value')
  const [iv, tag, ciphertext] = parts.map((part) => Buffer.from(part, 'base64')) as [Buffer, Buffer, Buffer]
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv)
    decipher.setAuthTag(tag)
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8')
  } catch {
    // GCM's authentication failed: another key, or the value was changed.
    throw new SealedSecretError('the key does not open this value')
  }
}
