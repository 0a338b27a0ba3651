import { isAddress } from 'viem'
import type { PaymentKey } from '../store/payment-lookups.ts'

/**
 * The ActionCable wire protocol (`actioncable-v1-json`) as far as the payment widget uses it:
 * server frames welcome / ping / confirm_subscription / reject_subscription / disconnect and channel
 * messages; client commands subscribe / unsubscribe, each naming its channel by an identifier that
 * is itself a JSON string, echoed back verbatim.
 */
export const ACTION_CABLE_PROTOCOL = 'actioncable-v1-json'

export type ClientCommand =
  | { command: 'subscribe'; identifier: string }
  | { command: 'unsubscribe'; identifier: string }
  | { command: 'message'; identifier: string }

const MAX_IDENTIFIER_LENGTH = 1024

/** A client frame, or undefined when it is not one we understand (it is then ignored). */
export function parseClientCommand(frame: string): ClientCommand | undefined {
  let data: unknown
  try {
    data = JSON.parse(frame)
  } catch {
    return undefined
  }
  if (typeof data !== 'object' || data === null) return undefined
  const { command, identifier } = data as { command?: unknown; identifier?: unknown }
  if (typeof identifier !== 'string' || identifier.length > MAX_IDENTIFIER_LENGTH) return undefined
  if (command === 'subscribe' || command === 'unsubscribe' || command === 'message') return { command, identifier }
  return undefined
}

/**
 * A `PaymentChannel` identifier: `{"channel":"PaymentChannel","blockchain":…,"sender":…,"nonce":…}`,
 * nonce a number or a string of digits, sender any letter case. Undefined when malformed.
 */
export function parsePaymentIdentifier(identifier: string): PaymentKey | undefined {
  let data: unknown
  try {
    data = JSON.parse(identifier)
  } catch {
    return undefined
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined
  const { channel, blockchain, sender, nonce } = data as Record<string, unknown>
  if (channel !== 'PaymentChannel') return undefined
  if (typeof blockchain !== 'string' || !/^[a-z0-9_-]{1,40}$/.test(blockchain)) return undefined
  if (typeof sender !== 'string' || !isAddress(sender, { strict: false })) return undefined
  let n: bigint
  if (typeof nonce === 'number' && Number.isSafeInteger(nonce) && nonce >= 0) n = BigInt(nonce)
  else if (typeof nonce === 'string' && /^\d{1,20}$/.test(nonce)) n = BigInt(nonce)
  else return undefined
  if (n >= 2n ** 64n) return undefined
  return { blockchain, sender: sender.toLowerCase(), nonce: n }
}

export const welcomeFrame = (): string => JSON.stringify({ type: 'welcome' })

/** ActionCable's heartbeat: the server time in whole seconds. */
export const pingFrame = (now: Date): string => JSON.stringify({ type: 'ping', message: Math.floor(now.getTime() / 1000) })

export const confirmFrame = (identifier: string): string => JSON.stringify({ identifier, type: 'confirm_subscription' })

export const rejectFrame = (identifier: string): string => JSON.stringify({ identifier, type: 'reject_subscription' })

export const messageFrame = (identifier: string, message: unknown): string => JSON.stringify({ identifier, message })

/** Sent before the server closes connections on shutdown; ActionCable clients reconnect (to another node). */
export const disconnectFrame = (reason: 'server_restart' | 'invalid_request', reconnect: boolean): string =>
  JSON.stringify({ type: 'disconnect', reason, reconnect })
