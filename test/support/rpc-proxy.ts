// A real HTTP JSON-RPC proxy in front of anvil that counts round trips, for tests that assert how
// many requests a feature costs. Each HTTP request is one round trip; a JSON-RPC batch is one
// request carrying several calls.
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ProxiedRequest {
  /** The parsed JSON body: one call object, or an array for a batch. */
  body: unknown
  /** Method names in the request (several for a batch). */
  methods: string[]
  /** The raw body, e.g. to look for a function selector. */
  raw: string
}

export type CallRefusal = (call: { method: string; params: unknown[] }) => { code: number; message: string } | null

export interface RpcProxy {
  url: string
  /** Every request forwarded since the last reset, in arrival order. */
  requests: ProxiedRequest[]
  reset(): void
  /** While down, every request has its connection dropped (an unreachable RPC). */
  setDown(down: boolean): void
  /** While set, every call is answered with this JSON-RPC error (e.g. -32005 rate limited). */
  setRefusal(error: { code: number; message: string } | null): void
  /**
   * While set, each call for which `refuse` returns an error is answered with it, the others are
   * forwarded (in a batch, the answers of the refused calls alone are replaced).
   */
  setCallRefusal(refuse: CallRefusal | null): void
  /**
   * The next request with a call for which `matches` is true waits, unforwarded, until `release()`;
   * `arrived` resolves when it came.
   */
  hold(matches: (call: { method: string; params: unknown[] }) => boolean): { arrived: Promise<void>; release(): void }
  close(): Promise<void>
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

export async function startRpcProxy(upstream: string): Promise<RpcProxy> {
  let down = false
  let refusal: { code: number; message: string } | null = null
  let callRefusal: CallRefusal | null = null
  let holding: { matches: (call: { method: string; params: unknown[] }) => boolean; arrive: () => void; released: Promise<void> } | null =
    null
  const proxy: RpcProxy = {
    url: '',
    requests: [],
    reset: () => void (proxy.requests = []),
    setDown: (value) => void (down = value),
    setRefusal: (value) => void (refusal = value),
    setCallRefusal: (value) => void (callRefusal = value),
    hold(matches) {
      let arrive!: () => void
      let release!: () => void
      const arrived = new Promise<void>((resolve) => (arrive = resolve))
      holding = { matches, arrive, released: new Promise<void>((resolve) => (release = resolve)) }
      return { arrived, release }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  const server = createServer(async (request, response) => {
    const raw = await readBody(request)
    if (down) {
      request.socket.destroy()
      return
    }
    let body: unknown
    try {
      body = JSON.parse(raw)
    } catch {
      body = undefined
    }
    const calls = Array.isArray(body) ? body : [body]
    const held = holding
    const callOf = (call: unknown) => {
      const { method, params } = (call ?? {}) as { method?: unknown; params?: unknown }
      return { method: String(method), params: Array.isArray(params) ? params : [] }
    }
    if (held && calls.some((call) => held.matches(callOf(call)))) {
      holding = null
      held.arrive()
      await held.released
    }
    proxy.requests.push({
      body,
      raw,
      methods: calls.map((c) => String((c as { method?: unknown } | undefined)?.method)),
    })
    if (refusal) {
      const refuse = (call: unknown) => ({ jsonrpc: '2.0', id: (call as { id?: unknown } | undefined)?.id ?? null, error: refusal })
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify(Array.isArray(body) ? body.map(refuse) : refuse(body)))
      return
    }
    const refusals = new Map<unknown, { code: number; message: string }>()
    for (const call of callRefusal ? calls : []) {
      const error = callRefusal!(callOf(call))
      if (error) refusals.set((call as { id?: unknown } | undefined)?.id, error)
    }
    if (refusals.size > 0) {
      let answers: unknown[] = []
      try {
        const answer = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw })
        const parsed = (await answer.json()) as unknown
        answers = Array.isArray(parsed) ? parsed : [parsed]
      } catch {
        request.socket.destroy()
        return
      }
      const replaced = answers.map((item) => {
        const id = (item as { id?: unknown }).id
        const error = refusals.get(id)
        return error ? { jsonrpc: '2.0', id, error } : item
      })
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify(Array.isArray(body) ? replaced : replaced[0]))
      return
    }
    try {
      const answer = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw })
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
