import WebSocket from 'ws'

export type CableFrame = { type?: string; identifier?: string; message?: unknown; [key: string]: unknown }

/** A real WebSocket client of `/cable`, speaking as the ActionCable JS client does. */
export interface TestCableClient {
  socket: WebSocket
  /** The earliest received frame not taken yet that matches (default: any but pings); waits up to `timeoutMs`. */
  next(match?: (frame: CableFrame) => boolean, timeoutMs?: number): Promise<CableFrame>
  /** Frames received and not taken yet. */
  pending(): CableFrame[]
  send(data: unknown): void
  subscribe(identifier: Record<string, unknown>): string
  closed: Promise<{ code: number }>
  close(): Promise<void>
}

export const paymentIdentifier = (key: { blockchain: string; sender: string; nonce: bigint | number | string }) =>
  JSON.stringify({
    channel: 'PaymentChannel',
    blockchain: key.blockchain,
    sender: key.sender,
    nonce: typeof key.nonce === 'bigint' ? Number(key.nonce) : key.nonce,
  })

const notPing = (frame: CableFrame) => frame.type !== 'ping'

export async function connectCable(baseUrl: string): Promise<TestCableClient> {
  const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/cable`, ['actioncable-v1-json', 'actioncable-unsupported'])
  const frames: CableFrame[] = []
  const waiters = new Set<() => void>()
  socket.on('message', (data) => {
    frames.push(JSON.parse(data.toString()) as CableFrame)
    for (const wake of waiters) wake()
  })
  const closed = new Promise<{ code: number }>((resolve) => socket.on('close', (code) => resolve({ code })))
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve())
    socket.once('error', reject)
  })

  const client: TestCableClient = {
    socket,
    closed,
    pending: () => [...frames],
    next(match = notPing, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const index = frames.findIndex(match)
          if (index < 0) return false
          const [frame] = frames.splice(index, 1)
          cleanup()
          resolve(frame!)
          return true
        }
        const timer = setTimeout(() => {
          cleanup()
          reject(new Error(`no matching cable frame within ${timeoutMs} ms; pending: ${JSON.stringify(frames)}`))
        }, timeoutMs)
        const cleanup = () => {
          clearTimeout(timer)
          waiters.delete(wake)
        }
        const wake = () => void check()
        if (!check()) waiters.add(wake)
      })
    },
    send(data) {
      socket.send(typeof data === 'string' || Buffer.isBuffer(data) ? data : JSON.stringify(data))
    },
    subscribe(identifier) {
      const id = JSON.stringify(identifier)
      client.send({ command: 'subscribe', identifier: id })
      return id
    },
    async close() {
      if (socket.readyState === WebSocket.CLOSED) return
      socket.close()
      await closed
    },
  }
  return client
}

/** A client that has been welcomed (the server's first frame). */
export async function connectWelcomed(baseUrl: string): Promise<TestCableClient> {
  const client = await connectCable(baseUrl)
  const welcome = await client.next()
  if (welcome.type !== 'welcome') throw new Error(`expected a welcome frame, got ${JSON.stringify(welcome)}`)
  return client
}

/** Subscribes to the payment's channel and waits for the confirmation; returns the identifier. */
export async function subscribeConfirmed(
  client: TestCableClient,
  key: { blockchain: string; sender: string; nonce: bigint | number | string },
  changes: Record<string, unknown> = {},
): Promise<string> {
  const identifier = client.subscribe({ ...(JSON.parse(paymentIdentifier(key)) as Record<string, unknown>), ...changes })
  const confirm = await client.next()
  if (confirm.type !== 'confirm_subscription' || confirm.identifier !== identifier) {
    throw new Error(`expected confirm_subscription of ${identifier}, got ${JSON.stringify(confirm)}`)
  }
  return identifier
}

/** The HTTP answer to a WebSocket upgrade the server refused (rejects when it was accepted). */
export function refusedUpgrade(baseUrl: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/cable`, ['actioncable-v1-json'])
    socket.on('open', () => {
      socket.close()
      reject(new Error('the upgrade was accepted'))
    })
    // The client leaves its end open: the server must close the refused socket itself.
    socket.on('unexpected-response', (_request, response) => {
      let body = ''
      response.on('data', (chunk: Buffer) => (body += chunk.toString()))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }))
    })
    socket.on('error', () => {})
  })
}
