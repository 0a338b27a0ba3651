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

/** One JSON-RPC call and the upstream's answer to it, for a test to rewrite (a provider that lies). */
export type AnswerRewrite = (call: { method: string; params: unknown[] }, result: unknown) => unknown

export interface FaultyRpcProxy {
  url: string
  /** Failures injected so far, by kind. */
  injected: { error: number; hang: number; drop: number; rateLimited: number; refused: number }
  forwarded: number
  /** Arrival time (performance.now()) of every HTTP request, for request-rate assertions. */
  arrivals: number[]
  setRates(rates: Partial<FaultRates>): void
  /** Forwards to another node from now on (a node restarted under the same URL). */
  setUpstream(url: string): void
  /** Serves the chain as if its head were `blocks` behind the upstream's: newer blocks, transactions and receipts are null. */
  setLag(blocks: number): void
  /** These methods are answered "method not found" (-32601), as a provider that does not offer them. */
  refuseMethods(methods: string[]): void
  /** The next `count` requests are answered HTTP 429 with `Retry-After: retryAfterSeconds`. */
  rateLimit(count: number, retryAfterSeconds: number): void
  /** Every request waits this long before it is answered (a slower provider). */
  setDelay(ms: number): void
  /** Rewrites answers (fabricated or hidden evidence); null: forward them as they are. */
  setRewrite(rewrite: AnswerRewrite | null): void
  /**
   * A request carrying a call for which `fails` returns true is answered HTTP 500 (a provider that
   * fails selectively); null: none. Checked before any rewrite.
   */
  setCallFailure(fails: ((call: { method: string; params: unknown[] }) => boolean) | null): void
  /** While set, every request is left hanging (never answered) until the proxy closes. */
  setHanging(hanging: boolean): void
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
  upstreamUrl: string,
  options: Partial<FaultRates> & { seed?: number; hangMs?: number } = {},
): Promise<FaultyRpcProxy> {
  let upstream = upstreamUrl
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

  let lag = 0
  let refused = new Set<string>()
  let limitedLeft = 0
  let retryAfter = 1
  let rewrite: AnswerRewrite | null = null
  let delayMs = 0
  let callFailure: ((call: { method: string; params: unknown[] }) => boolean) | null = null
  let hangAll = false
  const proxy: FaultyRpcProxy = {
    url: '',
    injected: { error: 0, hang: 0, drop: 0, rateLimited: 0, refused: 0 },
    forwarded: 0,
    arrivals: [],
    setRates: (changes) => void Object.assign(rates, changes),
    setUpstream: (url) => void (upstream = url),
    setLag: (blocks) => void (lag = blocks),
    refuseMethods: (methods) => void (refused = new Set(methods)),
    rateLimit: (count, seconds) => {
      limitedLeft = count
      retryAfter = seconds
    },
    setRewrite: (next) => void (rewrite = next),
    setDelay: (ms) => void (delayMs = ms),
    setCallFailure: (fails) => void (callFailure = fails),
    setHanging: (value) => void (hangAll = value),
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of hanging) clearTimeout(timer)
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  const server = createServer(async (request, response) => {
    const raw = await readBody(request)
    proxy.arrivals.push(performance.now())
    if (hangAll) {
      proxy.injected.hang++
      return
    }
    if (callFailure) {
      let calls: { method?: string; params?: unknown[] }[] = []
      try {
        const parsed = JSON.parse(raw) as typeof calls | (typeof calls)[number]
        calls = Array.isArray(parsed) ? parsed : [parsed]
      } catch {
        /* not JSON: forwarded as it is */
      }
      if (calls.some((c) => callFailure!({ method: String(c.method), params: c.params ?? [] }))) {
        proxy.injected.error++
        return void response.writeHead(500, { 'content-type': 'text/plain' }).end('upstream exploded (selectively)')
      }
    }
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs))
    if (limitedLeft > 0) {
      limitedLeft--
      proxy.injected.rateLimited++
      return void response.writeHead(429, { 'content-type': 'text/plain', 'retry-after': String(retryAfter) }).end('rate limited')
    }
    if (lag > 0 || refused.size > 0 || rewrite) {
      try {
        const answer = await answerCalls(raw)
        proxy.forwarded++
        return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer))
      } catch {
        return void request.socket.destroy()
      }
    }
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
  const call = async (method: string, params: unknown[]): Promise<{ result?: unknown; error?: unknown }> => {
    const answer = await fetch(upstream, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    })
    return (await answer.json()) as { result?: unknown; error?: unknown }
  }
  const hex = (n: bigint) => `0x${n.toString(16)}`
  /** The lagging head, or undefined when not lagging. */
  const laggingHead = async (): Promise<bigint | undefined> => {
    if (lag === 0) return undefined
    const { result } = await call('eth_blockNumber', [])
    const head = BigInt(result as string) - BigInt(lag)
    return head < 0n ? 0n : head
  }
  const answerOne = async (body: { id?: unknown; method: string; params?: unknown[] }) => {
    const params = body.params ?? []
    const reply = (fields: object) => ({ jsonrpc: '2.0', id: body.id ?? null, ...fields })
    if (refused.has(body.method)) {
      proxy.injected.refused++
      return reply({ error: { code: -32601, message: `the method ${body.method} does not exist/is not available` } })
    }
    const head = await laggingHead()
    let forwardParams = params
    if (head !== undefined) {
      if (body.method === 'eth_blockNumber') return reply({ result: hex(head) })
      if ((body.method === 'eth_getBlockByNumber' || body.method === 'eth_getBlockReceipts') && params[0] === 'latest') {
        forwardParams = [hex(head), ...params.slice(1)]
      }
      const asked =
        typeof forwardParams[0] === 'string' && /^0x[0-9a-f]{1,16}$/i.test(forwardParams[0]) ? BigInt(forwardParams[0]) : undefined
      if ((body.method === 'eth_getBlockByNumber' || body.method === 'eth_getBlockReceipts') && asked !== undefined && asked > head) {
        return reply({ result: null })
      }
    }
    const answer = await call(body.method, forwardParams)
    if (answer.error !== undefined) return reply({ error: answer.error })
    let result = answer.result
    if (head !== undefined && result && typeof result === 'object' && !Array.isArray(result)) {
      const mined = (result as { blockNumber?: unknown }).blockNumber
      if (typeof mined === 'string' && BigInt(mined) > head) result = null
    }
    if (rewrite) result = rewrite({ method: body.method, params }, result)
    return reply({ result })
  }
  const answerCalls = async (raw: string): Promise<unknown> => {
    const parsed = JSON.parse(raw) as { method: string } | { method: string }[]
    return Array.isArray(parsed) ? Promise.all(parsed.map(answerOne)) : answerOne(parsed)
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return proxy
}
