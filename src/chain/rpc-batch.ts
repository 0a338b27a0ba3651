import { BaseError, HttpRequestError, SocketClosedError, TimeoutError, WebSocketRequestError, type PublicClient } from 'viem'
import { ChainUnavailableError } from './errors.ts'

/** True when the node could not be reached or did not answer in time (as opposed to answering with an error). */
export function isUnreachable(error: unknown): boolean {
  if (!(error instanceof BaseError)) return true
  return error.walk((e) =>
    e instanceof HttpRequestError || e instanceof TimeoutError || e instanceof WebSocketRequestError || e instanceof SocketClosedError,
  ) !== null
}

export interface RpcCall {
  method: string
  params: unknown[]
}

/** One answer of a batch: the node's result, or its error for this call alone. */
export type RpcAnswer = { result: unknown } | { error: { code?: number; message: string } }

const TIMEOUT_MS = 10_000

/**
 * Sends calls as one JSON-RPC batch (one HTTP request) to the first http(s) URL that answers; the
 * next URL is tried when one cannot be reached. Chains with only WebSocket URLs, and nodes that refuse
 * batches, get the calls sent side by side through the chain's client instead.
 */
export async function sendRpcBatch(urls: string[], client: PublicClient, calls: RpcCall[]): Promise<RpcAnswer[]> {
  if (calls.length === 0) return []
  const httpUrls = urls.filter((url) => /^https?:/.test(url))
  let lastError: unknown
  for (const url of httpUrls) {
    let body: unknown
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(calls.map((call, id) => ({ jsonrpc: '2.0', id, method: call.method, params: call.params }))),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      })
      if (!response.ok) throw new Error(`HTTP ${response.status} from the RPC`)
      body = await response.json()
    } catch (error) {
      lastError = error
      continue
    }
    if (Array.isArray(body)) return matchAnswers(body, calls.length)
    return sendSideBySide(client, calls) // the node answers, but not to batches
  }
  if (httpUrls.length > 0 && httpUrls.length === urls.length) {
    throw new ChainUnavailableError('the chain RPC did not answer', { cause: lastError })
  }
  return sendSideBySide(client, calls)
}

function matchAnswers(body: unknown[], count: number): RpcAnswer[] {
  const answers: RpcAnswer[] = Array.from({ length: count }, () => ({ error: { message: 'no answer in the batch' } }))
  for (const item of body) {
    if (typeof item !== 'object' || item === null) continue
    const { id, result, error } = item as { id?: unknown; result?: unknown; error?: { code?: number; message?: string } }
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id >= count) continue
    answers[id] = error ? { error: { code: error.code, message: String(error.message ?? 'RPC error') } } : { result }
  }
  return answers
}

async function sendSideBySide(client: PublicClient, calls: RpcCall[]): Promise<RpcAnswer[]> {
  const settled = await Promise.allSettled(
    calls.map((call) => client.request({ method: call.method, params: call.params } as never)),
  )
  // Partial answers from a failing node would silently drop data: all or nothing.
  const unreachable = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected' && isUnreachable(s.reason))
  if (unreachable) throw new ChainUnavailableError('the chain RPC did not answer', { cause: unreachable.reason })
  return settled.map((s) =>
    s.status === 'fulfilled' ? { result: s.value } : { error: { message: (s.reason as Error).message.split('\n')[0]! } },
  )
}
