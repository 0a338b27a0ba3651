// A real HTTP JSON-RPC proxy in front of anvil that injects failures: HTTP 500 and 429 answers,
// JSON-RPC internal errors, dropped connections and requests that hang past the client's timeout.
// Failures are drawn from a seeded generator, so a failing run can be replayed.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface FaultRates {
  /** Share of requests answered with an error (HTTP 500, HTTP 429 or a JSON-RPC -32603). */
  error: number
  /** Share of requests left hanging for `hangMs`, then dropped. */
  hang: number
  /** Share of requests whose connection is dropped at once. */
  drop: number
}

export interface FaultyRpcProxy {
  url: string
  /** Failures injected so far, by kind. */
  injected: { error: number; hang: number; drop: number }
  forwarded: number
  setRates(rates: Partial<FaultRates>): void
  close(): Promise<void>
}

/** mulberry32: a small seeded PRNG. */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

export async function startFaultyRpcProxy(
  upstream: string,
  options: Partial<FaultRates> & { seed?: number; hangMs?: number } = {},
): Promise<FaultyRpcProxy> {
  const rates: FaultRates = { error: options.error ?? 0, hang: options.hang ?? 0, drop: options.drop ?? 0 }
  const next = random(options.seed ?? 1)
  const hanging = new Set<NodeJS.Timeout>()
  let errorKind = 0

  const answerError = (raw: string, response: ServerResponse) => {
    const kind = errorKind++ % 3
    if (kind === 0) return void response.writeHead(500, { 'content-type': 'text/plain' }).end('upstream exploded')
    if (kind === 1) return void response.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '1' }).end('slow down')
    let id: unknown = null
    try {
      id = (JSON.parse(raw) as { id?: unknown }).id ?? null
    } catch {
      /* not JSON: null id */
    }
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32603, message: 'internal error (injected)' } }))
  }

  const proxy: FaultyRpcProxy = {
    url: '',
    injected: { error: 0, hang: 0, drop: 0 },
    forwarded: 0,
    setRates: (changes) => void Object.assign(rates, changes),
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of hanging) clearTimeout(timer)
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  const server = createServer(async (request, response) => {
    const raw = await readBody(request)
    const roll = next()
    if (roll < rates.error) {
      proxy.injected.error++
      return answerError(raw, response)
    }
    if (roll < rates.error + rates.hang) {
      proxy.injected.hang++
      const timer = setTimeout(() => {
        hanging.delete(timer)
        request.socket.destroy()
      }, options.hangMs ?? 2_000)
      hanging.add(timer)
      return
    }
    if (roll < rates.error + rates.hang + rates.drop) {
      proxy.injected.drop++
      request.socket.destroy()
      return
    }
    try {
      const answer = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw })
      proxy.forwarded++
      response.writeHead(answer.status, { 'content-type': 'application/json' })
      response.end(await answer.text())
    } catch {
      request.socket.destroy()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return proxy
}
