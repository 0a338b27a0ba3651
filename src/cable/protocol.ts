import { isAddress } from 'viem'
import type { ChannelKey } from './channel-key.ts'

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

/**
 * A client frame, or undefined when it is not one we understand (it is then ignored). Widget 13 sends its
 * own keep-alive `{"type":"ping","message":<seconds>}` every 3 s: no command, so ignored like any other.
 */
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
 * A `PaymentChannel` identifier, as the widgets send it: `{"channel":"PaymentChannel","blockchain":…,
 * "sender":…,"nonce":…}` (widget 12), or without a nonce `{…,"sender":…,"receiver":…,"deadline":…}`
 * (widget 13). Numbers as JSON numbers or strings of digits, addresses any letter case. An identifier with
 * a nonce names the payment by it (section 4 unchanged), whatever else it carries. Undefined when malformed.
 */
export function parsePaymentIdentifier(identifier: string): ChannelKey | undefined {
  let data: unknown
  try {
    data = JSON.parse(identifier)
  } catch {
    return undefined
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined
  const { channel, blockchain, sender, nonce, receiver, deadline } = data as Record<string, unknown>
  if (channel !== 'PaymentChannel') return undefined
  if (typeof blockchain !== 'string' || !/^[a-z0-9_-]{1,40}$/.test(blockchain)) return undefined
  if (!isAnyAddress(sender)) return undefined
  if (nonce !== undefined) {
    const n = unsignedOf(nonce)
    return n === undefined ? undefined : { blockchain, sender: sender.toLowerCase(), nonce: n }
  }
  if (!isAnyAddress(receiver)) return undefined
  const d = unsignedOf(deadline)
  return d === undefined ? undefined : { blockchain, sender: sender.toLowerCase(), receiver: receiver.toLowerCase(), deadline: d }
}

const isAnyAddress = (value: unknown): value is string => typeof value === 'string' && isAddress(value, { strict: false })

/** A number or string of digits below 2^64 (nonces, and deadlines: the column holds 20 digits). */
function unsignedOf(value: unknown): bigint | undefined {
  let n: bigint
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) n = BigInt(value)
  else if (typeof value === 'string' && /^\d{1,20}$/.test(value)) n = BigInt(value)
  else return undefined
  return n < 2n ** 64n ? n : undefined
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
