import { createHash, randomBytes, randomUUID } from 'node:crypto'

export const newId = (): string => randomUUID()

/** A fresh secret credential with a readable prefix: 192 random bits, base64url. */
export function newSecret(prefix: string): string {
  return `${prefix}_${randomBytes(24).toString('base64url')}`
}

/** Credentials are stored only as their SHA-256: they carry enough entropy that a slow hash adds nothing. */
export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret).digest()
}
