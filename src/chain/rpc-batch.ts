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
  const answers = await send(urls, client, calls)
  // A call may fail by itself (a revert); any other error means the node did not do the work (rate
  // limit, internal error), and partial answers would silently drop data: all or nothing.
  const refused = answers.find((answer) => 'error' in answer && !isExecutionFailure(answer.error))
  if (refused && 'error' in refused) {
    throw new ChainUnavailableError(`the chain RPC refused a call: ${refused.error.message}`, { cause: refused.error })
  }
  return answers
}

/** True for errors of the call itself (revert, out of gas, bad opcode), as opposed to the node's. */
export function isExecutionFailure(error: { code?: number; message: string }): boolean {
  return error.code === 3 || /revert|out of gas|gas required exceeds|invalid opcode|invalid jump|stack (under|over)flow/i.test(error.message)
}

async function send(urls: string[], client: PublicClient, calls: RpcCall[]): Promise<RpcAnswer[]> {
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
  const unreachable = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected' && isUnreachable(s.reason))
  if (unreachable) throw new ChainUnavailableError('the chain RPC did not answer', { cause: unreachable.reason })
  return settled.map((s) => {
    if (s.status === 'fulfilled') return { result: s.value }
    const reason = s.reason as { code?: unknown; details?: unknown; message?: unknown }
    const message = String(reason.details || reason.message || 'RPC error').split('\n')[0]!
    return { error: { code: typeof reason.code === 'number' ? reason.code : undefined, message } }
  })
}
