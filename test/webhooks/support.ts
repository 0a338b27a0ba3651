import { Webhook } from 'standardwebhooks'
import type { Received } from '../callbacks/support.ts'
import { verifiedBy } from '../callbacks/support.ts'

/**
 * Verifies a received callback as an integrator does, with the npm `standardwebhooks` library, for a
 * receiver whose clock reads `at` (the library checks the timestamp against Date.now(), ±5 minutes).
 */
export function standardVerifies(received: Received, secret: string, at: Date = new Date()): boolean {
  const realNow = Date.now
  Date.now = () => at.getTime()
  try {
    new Webhook(secret).verify(received.body, received.headers as Record<string, string>)
    return true
  } catch {
    return false
  } finally {
    Date.now = realNow
  }
}

/** Both verifiers of the same callback: DePay's RSA-PSS `x-signature` and the Standard Webhooks HMAC. */
export async function verifiedByBoth(received: Received, publicKey: string, secret: string, at?: Date): Promise<boolean> {
  return (await verifiedBy(received, publicKey)) && standardVerifies(received, secret, at)
}
