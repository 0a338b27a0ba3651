import websocket from '@fastify/websocket'
import type { FastifyInstance } from 'fastify'
import { Counter, Gauge } from 'prom-client'
import type { RawData, WebSocket } from 'ws'
import type { Common } from '../common/common.ts'
import { problem } from '../http/problem.ts'
import { problemResponses } from '../http/problem-schemas.ts'
import type { ChannelKey } from './channel-key.ts'
import { createAddressLimits } from './address-limits.ts'
import { CableConnection } from './connection.ts'
import { answerRefusedHandshake } from './handshake-problem.ts'
import type { CableHub } from './hub.ts'
import { ACTION_CABLE_PROTOCOL, disconnectFrame, pingFrame, welcomeFrame } from './protocol.ts'
import type { WidgetMessage } from './widget-messages.ts'

/** Calls `tick` every `intervalMs` until the returned stop is called; injectable so tests tick by hand. */
export type Ticker = (tick: () => void, intervalMs: number) => () => void

export const intervalTicker: Ticker = (tick, intervalMs) => {
  const timer = setInterval(tick, intervalMs)
  timer.unref()
  return () => clearInterval(timer)
}

/** ActionCable's heartbeat period; clients consider a connection stale after missing two. */
export const PING_INTERVAL_MS = 3000
/** Client frames are tiny (a subscribe command); anything larger closes the socket (1009). */
const MAX_FRAME_BYTES = 16 * 1024
/** A client that does not read its messages is dropped rather than buffered without end. */
const MAX_BUFFERED_BYTES = 1024 * 1024

export interface CableRouteDeps {
  common: Common
  hub: CableHub
  currentState(key: ChannelKey): Promise<WidgetMessage | undefined>
  ticker?: Ticker
}

/**
 * `GET /cable`: the ActionCable-compatible WebSocket the payment widget waits on. Public (the widget
 * has no API key): it only ever tells a subscriber about the payment it names.
 */
export function cableRoute(deps: CableRouteDeps) {
  return async function cablePlugin(app: FastifyInstance): Promise<void> {
    const sockets = new Set<WebSocket>()
    new Gauge({
      name: 'paywatch_cable_connections',
      help: 'Open widget WebSocket connections on this node',
      registers: [deps.common.metrics.registry],
      collect() {
        this.set(sockets.size)
      },
    })
    new Gauge({
      name: 'paywatch_cable_subscriptions',
      help: 'PaymentChannel subscriptions on this node',
      registers: [deps.common.metrics.registry],
      collect() {
        this.set(deps.hub.size)
      },
    })
    const refusals = new Counter({
      name: 'paywatch_cable_refusals_total',
      help: 'Widget connections and subscriptions refused by a limit (address_connections, connection_rate, node_full, subscriptions)',
      labelNames: ['reason'],
      registers: [deps.common.metrics.registry],
    })
    const { config } = deps.common
    const addressLimits = createAddressLimits(
      {
        maxConnectionsPerAddress: config.cableMaxConnectionsPerAddress,
        connectBurst: config.cableConnectBurst,
        connectsPerSecond: config.cableConnectsPerSecond,
      },
      () => deps.common.clock().getTime(),
    )

    // Before @fastify/websocket's own hook closes the sockets: tell clients to reconnect elsewhere.
    app.addHook('preClose', async () => {
      for (const socket of sockets) send(socket, disconnectFrame('server_restart', true))
    })
    await app.register(websocket, {
      options: {
        maxPayload: MAX_FRAME_BYTES,
        // The ActionCable client offers actioncable-v1-json and closes unless the server picks it.
        handleProtocols: (protocols) => (protocols.has(ACTION_CABLE_PROTOCOL) ? ACTION_CABLE_PROTOCOL : false),
      },
      // A misbehaving client is its own problem: drop it, quietly.
      errorHandler: (error, socket, request) => {
        request.log.debug({ err: error }, 'cable: socket error')
        socket.terminate()
      },
    })
    app.websocketServer.on('wsClientError', answerRefusedHandshake)

    // Every open socket holds buffers and subscriptions: one client address may hold only so many, and open
    // them only so fast (429, as every limit of the service), so that it cannot take the node's sockets from
    // everyone else. Past the node's cap a new widget is told to come back (its ActionCable client reconnects
    // with backoff) instead of the node running out of memory. Added after @fastify/websocket's hooks: they
    // mark the request as an upgrade, so the refused socket is closed after the answer. The address is the
    // socket's (request.ip: the app trusts no proxy headers).
    const maxConnections = config.cableMaxConnections
    app.addHook('onRequest', async (request) => {
      if (!request.ws) return
      if (sockets.size >= maxConnections) {
        refusals.inc({ reason: 'node_full' })
        throw problem('CABLE_FULL', `this node holds its limit of ${maxConnections} widget connections; retry shortly`, {
          headers: { 'retry-after': '5' },
        })
      }
      // Counted from the handshake to the close of the TCP socket, so that handshakes in flight count too.
      const refused = addressLimits.admit(request.ip, (release) => request.raw.socket.once('close', release))
      if (refused) {
        refusals.inc({ reason: refused.reason })
        throw refused.problem
      }
    })

    const stopPings = (deps.ticker ?? intervalTicker)(() => {
      const frame = pingFrame(deps.common.clock())
      for (const socket of sockets) send(socket, frame)
      addressLimits.sweep()
    }, PING_INTERVAL_MS)
    app.addHook('onClose', async () => stopPings())

    app.route({
      method: 'GET',
      url: '/cable',
      schema: {
        summary: 'ActionCable WebSocket for the payment widget (PaymentChannel by blockchain, sender, nonce)',
        description: 'Connect with Upgrade: websocket (subprotocol actioncable-v1-json). A plain GET answers 426.',
        tags: ['widget'],
        security: [],
        response: {
          101: { description: 'Switched to the WebSocket protocol (ActionCable)', type: 'null' },
          ...problemResponses('BAD_WEBSOCKET_HANDSHAKE', 'UPGRADE_REQUIRED', 'RATE_LIMITED', 'CABLE_FULL'),
        },
      },
      handler: async () => {
        throw problem('UPGRADE_REQUIRED', 'GET /cable is a WebSocket endpoint; connect with Upgrade: websocket', {
          headers: { upgrade: 'websocket' },
        })
      },
      wsHandler: (socket) => {
        sockets.add(socket)
        const connection = new CableConnection(
          { send: (frame) => send(socket, frame), close: (code) => socket.close(code) },
          {
            hub: deps.hub,
            logger: deps.common.logger,
            currentState: deps.currentState,
            maxSubscriptions: config.cableMaxSubscriptions,
            onTooMany: () => refusals.inc({ reason: 'subscriptions' }),
          },
        )
        socket.on('message', (data, isBinary) => {
          if (isBinary) return
          connection.receive(textOf(data))
        })
        socket.on('close', () => {
          sockets.delete(socket)
          connection.close()
        })
        send(socket, welcomeFrame())
      },
    })
  }
}

function textOf(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8')
  return (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)).toString('utf8')
}

function send(socket: WebSocket, frame: string): void {
  if (socket.readyState !== socket.OPEN) return
  if (socket.bufferedAmount > MAX_BUFFERED_BYTES) {
    socket.terminate()
    return
  }
  socket.send(frame)
}
