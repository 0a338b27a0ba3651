// What DePay's published payment widgets send to a merchant's backend and to `/cable`, and what they do
// with the answers: read from their code (npm `@depay/widgets`, dist/esm/index.js), replayed here frame
// for frame with a real WebSocket client, so that the tests hold the service to exactly that behaviour
// without running React. Versions: 12.18.5 (PaymentTrackingProvider: openSocket, trace, startTracking,
// pollStatus) and 13.0.45 (PaymentTrackingProvider: openValidationSocket, trace, startTracking, pollStatus,
// with openManagedSocket).
import WebSocket from 'ws'
import type { CableFrame } from './cable-client.ts'

export type WidgetVersion = 12 | 13

/** A payment route as the widget computed it (amounts in base units, as `paymentRoute` holds them). */
export interface WidgetRoute {
  blockchain: string
  fromAddress: string
  toAddress: string
  fromToken: string
  fromAmount: bigint
  fromDecimals: number
  toToken: string
  toAmount: bigint
  toDecimals: number
  feeAmount?: bigint
  feeReceiver?: string
}

/**
 * 12.18.5 `openSocket(transaction)`: `{blockchain, sender: transaction.from || account, nonce: getNonce(…),
 * channel}` in that key order; the nonce is `transaction.nonce.toString()` or the wallet's transaction count
 * as a string.
 */
export const widget12Identifier = (blockchain: string, sender: string, nonce: bigint | number): string =>
  JSON.stringify({ blockchain, sender, nonce: nonce.toString(), channel: 'PaymentChannel' })

/**
 * 13.0.45 `openValidationSocket(paymentRoute, deadline)`: `{blockchain, sender: fromAddress, receiver:
 * toAddress, deadline, channel}`. The deadline is the route transaction's (web3-payments 15:
 * `Math.ceil(new Date()) + 1800 * 1000` unless given: a number, in milliseconds).
 */
export const widget13Identifier = (route: Pick<WidgetRoute, 'blockchain' | 'fromAddress' | 'toAddress'>, deadline: number): string =>
  JSON.stringify({
    blockchain: route.blockchain,
    sender: route.fromAddress,
    receiver: route.toAddress,
    deadline,
    channel: 'PaymentChannel',
  })

/** 13.0.45 `openManagedSocket` keepAlive: every 3000 ms `{type: "ping", message: Math.floor(Date.now() / 1000)}`. */
export const widget13KeepAlive = (now: Date): string => JSON.stringify({ type: 'ping', message: Math.floor(now.getTime() / 1000) })

/**
 * The track endpoint's body. 12.18.5 `trace` (before the transaction is sent): blockchain, sender (the
 * account), nonce, after_block, from_token, from_amount, from_decimals, to_token, to_amount, to_decimals,
 * fee_amount, deadline, selected_wallet; `startTracking` (after): blockchain, transaction, sender
 * (transaction.from), nonce, after_block, from_*, to_*, fee_amount, trace_attempt_id, deadline,
 * selected_wallet. 13.0.45 the same without nonce, with protocol_fee_amount, fee_receiver, fee2_amount,
 * fee2_receiver. Amounts are base-unit strings (`toString()` of the route's BigNumbers). Neither sends the
 * receiver: the merchant's backend knows it. Answered 200 or 201 = tracking started; anything else is
 * retried (12: every 3 s, 40 times; 13: every 2 s, 10 times).
 */
export function widgetTrackBody(
  version: WidgetVersion,
  route: WidgetRoute,
  fields: { afterBlock: bigint; deadline: number; nonce?: bigint; transaction?: string },
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    blockchain: route.blockchain,
    ...(fields.transaction ? { transaction: fields.transaction } : {}),
    sender: route.fromAddress,
    ...(version === 12 ? { nonce: String(fields.nonce) } : {}),
    after_block: fields.afterBlock.toString(),
    from_token: route.fromToken,
    from_amount: route.fromAmount.toString(),
    from_decimals: route.fromDecimals,
    to_token: route.toToken,
    to_amount: route.toAmount.toString(),
    to_decimals: route.toDecimals,
  }
  if (version === 12) body.fee_amount = route.feeAmount?.toString()
  else {
    body.protocol_fee_amount = undefined
    body.fee_amount = route.feeAmount?.toString()
    body.fee_receiver = route.feeReceiver
    body.fee2_amount = undefined
    body.fee2_receiver = undefined
  }
  if (fields.transaction) body.trace_attempt_id = undefined
  body.deadline = fields.deadline
  body.selected_wallet = 'MetaMask'
  // As JSON.stringify sends it: undefined fields are left out.
  return JSON.parse(JSON.stringify(body)) as Record<string, unknown>
}

/**
 * The poll endpoint's body, POSTed every 5 s once the transaction is sent. 12.18.5 `pollStatus`:
 * {blockchain, transaction, sender, nonce, after_block, to_token}; 13.0.45: {blockchain, transaction,
 * sender, receiver, deadline, after_block, to_token}. A 200/201 answer with a JSON body ends the wait:
 * 12 releases the user (`status` other than success only tells its `validated` callback), 13 releases on
 * success, shows PaymentFailed for `status: failed`, ValidationFailed for a `failed_reason` other than
 * FAILED; `forward_to` sends the user there. Any other answer (404) polls again.
 */
export function widgetPollBody(
  version: WidgetVersion,
  route: WidgetRoute,
  fields: { afterBlock: bigint; deadline: number; nonce?: bigint; transaction: string },
): Record<string, unknown> {
  return version === 12
    ? {
        blockchain: route.blockchain,
        transaction: fields.transaction,
        sender: route.fromAddress,
        nonce: String(fields.nonce),
        after_block: fields.afterBlock.toString(),
        to_token: route.toToken,
      }
    : {
        blockchain: route.blockchain,
        transaction: fields.transaction,
        sender: route.fromAddress,
        receiver: route.toAddress,
        deadline: fields.deadline,
        after_block: fields.afterBlock.toString(),
        to_token: route.toToken,
      }
}

/** What a replayed widget socket saw. */
export interface ReplayedWidget {
  /** Sockets the widget opened: 1, plus one per reconnect. */
  readonly sockets: number
  /** The close code each socket's `onclose` saw, in order. */
  readonly closeCodes: number[]
  /** Channel messages (`frame.message`) the widget acted on, in order. */
  readonly messages: Record<string, unknown>[]
  /** Every frame received, pings included. */
  readonly frames: CableFrame[]
  /** Resolves once the widget stopped: its socket closed and it decided not to reconnect (or hit `maxSockets`). */
  readonly stopped: Promise<void>
  /** The first frame received (now or later) that matches; fails after `timeoutMs`. */
  until(match: (frame: CableFrame) => boolean, timeoutMs?: number): Promise<CableFrame>
  /** Widget 13's keep-alive frame, sent now (the widget sends it every 3 s). */
  keepAlive(now?: Date): void
  /** Closes the current socket the way a page leaving would (no reconnect). */
  abandon(): void
}

/**
 * Opens `/cable` as the widget does (no subprotocol: `new WebSocket(url)`), subscribes on open, and handles
 * messages and closes as the version's code does. Reconnects follow the widget's rule (any close code but
 * 1000) but are made at once instead of after the widget's delay (12: 1 s; 13: 1, 2, 4… up to 10 s), and at
 * most `maxSockets` sockets are opened, so that a loop shows as a count instead of running forever.
 */
export function replayWidgetSocket(
  version: WidgetVersion,
  baseUrl: string,
  identifier: string,
  options: { maxSockets?: number } = {},
): ReplayedWidget {
  const maxSockets = options.maxSockets ?? 6
  const state = { sockets: 0, closeCodes: [] as number[], messages: [] as Record<string, unknown>[], frames: [] as CableFrame[] }
  let current: WebSocket | undefined
  const waiters = new Set<() => void>()
  let abandoned = false
  let stop!: () => void
  const stopped = new Promise<void>((resolve) => (stop = resolve))

  const open = () => {
    state.sockets++
    const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/cable`)
    current = socket
    socket.on('open', () => socket.send(JSON.stringify({ command: 'subscribe', identifier })))
    socket.on('message', (data) => {
      const item = JSON.parse(data.toString()) as CableFrame
      state.frames.push(item)
      for (const wake of waiters) wake()
      if (version === 12) onMessage12(socket, item)
      else onMessage13(socket, item)
    })
    socket.on('error', () => {})
    socket.on('close', (code) => {
      state.closeCodes.push(code)
      // 12.18.5 openSocket and 13.0.45 openManagedSocket: `if (!event || event.code != 1000)` reconnect.
      if (code !== 1000 && !abandoned && state.sockets < maxSockets) open()
      else stop()
    })
  }

  // 12.18.5 openSocket `onmessage`: pings and frames without a message are skipped; a message with
  // `release` closes the socket with no code (`socket.close()`), which a browser reports as 1005.
  const onMessage12 = (socket: WebSocket, item: CableFrame) => {
    if (item.type === 'ping' || !item.message) return
    const message = item.message as Record<string, unknown>
    state.messages.push(message)
    if (message.release) socket.close()
  }
  // 13.0.45 openManagedSocket `onmessage`: a frame with `error` forces a reopen (close 3000); else
  // processValidationSocketMessage: a message with `status` and `release` closes with 1000.
  const onMessage13 = (socket: WebSocket, item: CableFrame) => {
    if (item.error) return void socket.close(3000)
    if (!item.message) return
    const message = item.message as Record<string, unknown>
    state.messages.push(message)
    if (message.status && message.release) socket.close(1000)
  }

  open()
  return {
    get sockets() {
      return state.sockets
    },
    closeCodes: state.closeCodes,
    messages: state.messages,
    frames: state.frames,
    stopped,
    until(match, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const found = () => state.frames.find(match)
        const now = found()
        if (now) return resolve(now)
        const timer = setTimeout(() => {
          waiters.delete(wake)
          reject(new Error(`the widget saw no matching frame within ${timeoutMs} ms; frames: ${JSON.stringify(state.frames)}`))
        }, timeoutMs)
        const wake = () => {
          const frame = found()
          if (!frame) return
          clearTimeout(timer)
          waiters.delete(wake)
          resolve(frame)
        }
        waiters.add(wake)
      })
    },
    keepAlive(now = new Date()) {
      if (current?.readyState === WebSocket.OPEN) current.send(widget13KeepAlive(now))
    },
    abandon() {
      abandoned = true
      if (current && current.readyState !== WebSocket.CLOSED) current.close(1000)
      else stop()
    },
  }
}
