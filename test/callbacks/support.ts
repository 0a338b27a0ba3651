import { randomBytes, randomUUID } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { verify } from '@depay/js-verify-signature'
import type { Tracking } from '../../src/domain/tracking.ts'
import type { AttemptOutcome } from '../../src/store/attempt-records.ts'
import type { ClaimedDelivery } from '../../src/store/deliveries.ts'
import { completeTracking, type Completion } from '../../src/store/complete-tracking.ts'
import type { Db } from '../../src/store/infrastructure/database.ts'
import { insertTracking } from '../../src/store/trackings.ts'

/** One callback as the receiver got it: the raw body exactly as sent. */
export interface Received {
  path: string
  headers: IncomingHttpHeaders
  body: string
  at: number
}

export interface Answer {
  status?: number
  body?: string
  headers?: Record<string, string>
  /** Answer this late (a slow endpoint). */
  delayMs?: number
  /** Answer once this settles (an endpoint the test holds busy). */
  until?: Promise<unknown>
  /** Close the connection without an answer. */
  destroy?: boolean
  /** Send the status line, headers and a first chunk of the body, then nothing more (the answer never ends). */
  stall?: boolean
}

export interface Receiver {
  url: string
  received: Received[]
  /** Resolves once `count` callbacks arrived (fails after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>
  close(): Promise<void>
}

/** A real HTTP callback receiver on 127.0.0.1; `answer` decides per request (n = 0 for the first). */
export async function startReceiver(answer: (request: Received, n: number) => Answer = () => ({ status: 200 })): Promise<Receiver> {
  const received: Received[] = []
  const waiters: { count: number; resolve: () => void }[] = []
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const got: Received = {
        path: request.url ?? '/',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('latin1'),
        at: performance.now(),
      }
      const n = received.length
      received.push(got)
      for (const waiter of waiters.filter((w) => received.length >= w.count)) waiter.resolve()
      const reply = answer(got, n)
      const send = () => {
        if (reply.destroy) return void request.socket.destroy()
        response.writeHead(reply.status ?? 200, reply.headers ?? {})
        if (reply.stall) return void response.write(reply.body ?? 'partial')
        response.end(reply.body ?? '')
      }
      if (reply.delayMs) setTimeout(send, reply.delayMs).unref()
      else if (reply.until) void reply.until.finally(send)
      else send()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    waitFor(count, timeoutMs = 10_000) {
      if (received.length >= count) return Promise.resolve(received)
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver got ${received.length} of ${count} callbacks`)), timeoutMs)
        waiters.push({ count, resolve: () => (clearTimeout(timer), resolve(received)) })
      })
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** A port with nothing listening (connection refused). */
export async function closedPortUrl(): Promise<string> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return `http://127.0.0.1:${port}/closed`
}

export const randomAddress = (): string => `0x${randomBytes(20).toString('hex')}`

/** A pending tracking stored as POST /v2/payments would store it (no chain needed). */
export async function insertPending(db: Db, accountId: string, overrides: Partial<Tracking> = {}): Promise<Tracking> {
  const now = new Date()
  const tracking: Tracking = {
    id: randomUUID(),
    accountId,
    secretId: randomUUID(),
    shape: 'current',
    blockchain: 'ethereum',
    sender: randomAddress(),
    nonce: BigInt(Math.floor(Math.random() * 1e9)),
    receiver: randomAddress(),
    token: '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee',
    decimals: 18,
    commitment: 'confirmed',
    confirmations: 1,
    afterBlock: 100n,
    deadline: null,
    nonceless: false,
    amount: '1.5',
    feeAmount: null,
    feeReceiver: null,
    transaction: `0x${randomBytes(32).toString('hex')}`,
    payload: null,
    callback: null,
    forwardTo: null,
    forwardOnFailure: false,
    integrationId: null,
    linkId: null,
    shop: null,
    shopifyPaymentId: null,
    status: 'pending',
    failedReason: null,
    release: false,
    confirmedAt: null,
    createdAt: now,
    updatedAt: now,
    ...overrides,
  }
  const stored = await insertTracking(db, tracking)
  if (!stored) throw new Error('insertPending: conflicting tracking')
  return stored
}

/** A tracking completed the way the chain engine completes one (status change + delivery row). */
export async function insertCompleted(
  db: Db,
  accountId: string,
  overrides: Partial<Tracking> = {},
  completion: Completion = { status: 'success', transaction: overrides.transaction ?? `0x${randomBytes(32).toString('hex')}` },
  now = new Date(),
): Promise<Tracking> {
  const pending = await insertPending(db, accountId, overrides)
  const completed = await completeTracking(db, pending.id, completion, now)
  if (!completed) throw new Error('insertCompleted: not completed')
  return completed
}

/** DePay's own verifier, as an integrator runs it. */
export async function verifiedBy(received: { body: string; headers: Record<string, unknown> }, publicKey: string): Promise<boolean> {
  const signature = received.headers['x-signature']
  if (typeof signature !== 'string') return false
  return verify({ signature, publicKey, data: received.body })
}

/** Polls `check` (real time, short steps) until it returns a value; for state written by background work. */
export async function eventually<T>(check: () => Promise<T | undefined | false>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error('condition not reached in time')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** An attempt's outcome as the worker records it: by default a 200 that delivered, started at `at`. */
export function deliveredOutcome(delivery: ClaimedDelivery, at: Date, overrides: Partial<AttemptOutcome> = {}): AttemptOutcome {
  return {
    delivery,
    worker: 'worker-a',
    startedAt: at,
    durationMs: 3,
    outcome: 'delivered',
    statusCode: 200,
    error: null,
    excerpt: null,
    forwardTo: null,
    next: { state: 'delivered' },
    ...overrides,
  }
}
