import { createHmac } from 'node:crypto'
import type { WebhookSecretSet } from '../store/webhook-secrets.ts'

/**
 * Standard Webhooks signatures (docs/api.md §8): `v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`,
 * keyed with the base64 after `whsec_`. HMAC keys are kept decoded per secret (the same few secrets sign
 * every callback).
 */
const keys = new Map<string, Buffer>()
const MAX_KEYS = 10_000

function keyOf(secret: string): Buffer {
  let key = keys.get(secret)
  if (!key) {
    key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64')
    if (keys.size >= MAX_KEYS) keys.clear()
    keys.set(secret, key)
  }
  return key
}

export function standardSignature(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`
}

/**
 * The three Standard Webhooks headers of one attempt at `now`: signed with the current secret, and with
 * the previous one too (space-separated) while its rotation overlap lasts.
 */
export function standardWebhookHeaders(secrets: WebhookSecretSet, id: string, now: Date, body: string): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000)
  let signature = standardSignature(secrets.secret, id, timestamp, body)
  if (secrets.previous !== null && secrets.previousUntil !== null && now.getTime() < secrets.previousUntil.getTime())
    signature += ` ${standardSignature(secrets.previous, id, timestamp, body)}`
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature }
}
