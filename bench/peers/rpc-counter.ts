// A counting JSON-RPC proxy for bench:peers: HTTP requests and WebSocket messages from one client system
// to the node, so that each system's requests per block are measured on the same footing. `delayMs` holds
// every message that long each way (a request, its answer, a notification): a provider across a network
// rather than on the same machine, where a system's round trips after a block's notification show.
import { createServer, request as httpRequest, Agent, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { WebSocket, WebSocketServer } from 'ws'

export interface RpcCounter {
  httpUrl: string
  wsUrl: string
  /** HTTP requests (a batch is one) plus WebSocket messages sent to the node. */
  readonly requests: number
  /** JSON-RPC calls inside them (a batch of 5 is 5). */
  readonly calls: number
  /** Calls per method. */
  readonly methods: Map<string, number>
  /** Requests per method they hold (a batch of 5 counts once for each method in it). */
  readonly requestsWith: Map<string, number>
  close(): Promise<void>
}

const callsOf = (raw: string): string[] => {
  try {
    const body = JSON.parse(raw) as unknown
    return (Array.isArray(body) ? body : [body]).map((call) => String((call as { method?: unknown })?.method))
  } catch {
    return ['?']
  }
}

export async function startRpcCounter(httpUpstream: string, wsUpstream: string, delayMs = 0): Promise<RpcCounter> {
  // Timers of one duration fire in the order they were set: messages keep their order.
  const later = (send: () => void) => (delayMs > 0 ? setTimeout(send, delayMs) : send())
  const upstream = new URL(httpUpstream)
  const agent = new Agent({ keepAlive: true, maxSockets: 64 })
  let requests = 0
  let calls = 0
  const methods = new Map<string, number>()
  const requestsWith = new Map<string, number>()
  const count = (raw: string) => {
    requests++
    const held = callsOf(raw)
    for (const method of held) {
      calls++
      methods.set(method, (methods.get(method) ?? 0) + 1)
    }
    for (const method of new Set(held)) requestsWith.set(method, (requestsWith.get(method) ?? 0) + 1)
  }
  const server = createServer((incoming: IncomingMessage, response) => {
    const chunks: Buffer[] = []
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
    incoming.on('end', () => {
      const body = Buffer.concat(chunks)
      count(body.toString('utf8'))
      later(() => forward(body))
    })
    const forward = (body: Buffer) => {
      const upstreamRequest = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: '/',
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': body.length },
        },
        (answer) => {
          const parts: Buffer[] = []
          answer.on('data', (chunk: Buffer) => parts.push(chunk))
          answer.on('end', () =>
            later(() => {
              response.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json' })
              response.end(Buffer.concat(parts))
            }),
          )
        },
      )
      upstreamRequest.on('error', () => response.destroy())
      upstreamRequest.end(body)
    }
  })
  const sockets = new WebSocketServer({ server })
  sockets.on('connection', (client) => {
    const node = new WebSocket(wsUpstream)
    const early: string[] = []
    node.on('open', () => {
      for (const message of early.splice(0)) node.send(message)
    })
    client.on('message', (data) => {
      const message = data.toString()
      count(message)
      later(() => {
        if (node.readyState === WebSocket.OPEN) node.send(message)
        else early.push(message)
      })
    })
    node.on('message', (data) => {
      const message = data.toString()
      later(() => client.readyState === WebSocket.OPEN && client.send(message))
    })
    client.on('close', () => node.close())
    node.on('close', () => client.close())
    node.on('error', () => client.terminate())
    client.on('error', () => node.terminate())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    httpUrl: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    get requests() {
      return requests
    },
    requestsWith,
    get calls() {
      return calls
    },
    methods,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of sockets.clients) client.terminate()
        sockets.close()
        server.closeAllConnections()
        server.close(() => resolve())
        agent.destroy()
      }),
  }
}
