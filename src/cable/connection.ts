import type { Logger } from 'pino'
import type { ChannelKey } from './channel-key.ts'
import { type CableClient, type CableHub, deliver, type Subscription } from './hub.ts'
import { confirmFrame, parseClientCommand, parsePaymentIdentifier, rejectFrame } from './protocol.ts'
import type { WidgetMessage } from './widget-messages.ts'

/**
 * Subscribe commands a socket may send in its life, per subscription it may hold: a widget re-subscribes
 * now and then, a socket cycling subscribe/unsubscribe to make the node read is cut off.
 */
const SUBSCRIBE_COMMANDS_PER_SUBSCRIPTION = 10

export interface CableConnectionDeps {
  hub: CableHub
  logger: Logger
  /** Subscriptions the socket may hold (a widget needs one; the rest allow for retries). */
  maxSubscriptions: number
  /** A subscription was rejected because the socket holds its limit (counted in a metric). */
  onTooMany(): void
  /** The state to show a subscriber of a payment that completed or was released before it came. */
  currentState(key: ChannelKey): Promise<WidgetMessage | undefined>
}

/** The socket under a connection: frames out, and the close the server starts. */
export interface CableSocket {
  send(frame: string): void
  close(code: number): void
}

/** The close code after which the widgets do not reconnect (any other code makes them reconnect). */
export const CLOSE_NORMAL = 1000

/**
 * The commands of one WebSocket. Frames we do not understand are ignored, as ActionCable does: a
 * bad frame (widget 13's own keep-alive pings among them) never closes the connection or reaches anyone else.
 *
 * Once the user is released on every subscription of the socket, the server closes it with 1000: the
 * widgets reconnect after any other close (widget 12 closes without a code, which reaches it as 1005, and
 * would reconnect every second to be told the same release again).
 */
export class CableConnection {
  private readonly socket: CableSocket
  private readonly client: CableClient
  private readonly deps: CableConnectionDeps
  private readonly subscriptions = new Map<string, Subscription>()
  /** Subscriptions whose release was sent: they wait no more. */
  private readonly done = new Set<Subscription>()
  private closed = false
  private subscribeCommands = 0

  constructor(socket: CableSocket, deps: CableConnectionDeps) {
    this.socket = socket
    this.client = { send: (frame) => socket.send(frame), released: (subscription) => this.released(subscription) }
    this.deps = deps
  }

  receive(frame: string): void {
    if (this.closed) return
    const command = parseClientCommand(frame)
    if (!command) {
      this.deps.logger.debug({ bytes: frame.length }, 'cable: ignored a frame that is not a command')
      return
    }
    if (command.command === 'subscribe') this.subscribe(command.identifier)
    else if (command.command === 'unsubscribe') this.unsubscribe(command.identifier)
    // `message` (perform): PaymentChannel has no actions.
  }

  /** The socket closed: forget every subscription. */
  close(): void {
    if (this.closed) return
    this.closed = true
    for (const subscription of this.subscriptions.values()) this.deps.hub.remove(subscription)
    this.subscriptions.clear()
    this.done.clear()
  }

  private subscribe(identifier: string): void {
    if (this.subscriptions.has(identifier)) {
      this.client.send(confirmFrame(identifier))
      return
    }
    const key = parsePaymentIdentifier(identifier)
    this.subscribeCommands++
    if (!key) {
      this.client.send(rejectFrame(identifier))
      return
    }
    const { maxSubscriptions } = this.deps
    if (this.subscriptions.size >= maxSubscriptions || this.subscribeCommands > maxSubscriptions * SUBSCRIBE_COMMANDS_PER_SUBSCRIPTION) {
      this.deps.onTooMany()
      this.client.send(rejectFrame(identifier))
      return
    }
    const subscription: Subscription = { client: this.client, identifier, key, published: 0 }
    this.subscriptions.set(identifier, subscription)
    this.deps.hub.add(subscription)
    this.client.send(confirmFrame(identifier))
    void this.sendCurrentState(subscription)
  }

  private unsubscribe(identifier: string): void {
    const subscription = this.subscriptions.get(identifier)
    if (!subscription) return
    this.subscriptions.delete(identifier)
    this.done.delete(subscription)
    this.deps.hub.remove(subscription)
  }

  /** A message with `release: true` went to the subscription: close the socket when nothing else waits. */
  private released(subscription: Subscription): void {
    if (this.closed || this.subscriptions.get(subscription.identifier) !== subscription) return
    this.done.add(subscription)
    if (this.done.size < this.subscriptions.size) return
    this.close()
    this.socket.close(CLOSE_NORMAL)
  }

  /**
   * A widget that connects after the payment completed (or after a reconnect) would otherwise wait
   * forever: it is sent the final state at once. Skipped when fresher news reached it meanwhile.
   */
  private async sendCurrentState(subscription: Subscription): Promise<void> {
    const before = subscription.published
    let message: WidgetMessage | undefined
    try {
      message = await this.deps.currentState(subscription.key)
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'cable: could not read the current state of a payment')
      return
    }
    if (!message || this.closed || subscription.published !== before) return
    if (this.subscriptions.get(subscription.identifier) !== subscription) return
    deliver(subscription, message)
  }
}
