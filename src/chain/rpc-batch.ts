import { BaseError, HttpRequestError, SocketClosedError, TimeoutError, WebSocketRequestError, type PublicClient } from 'viem'
import { setTimeout as sleep } from 'node:timers/promises'
import { backoffPolicies, createBackoff, retryAfterMs } from '../common/backoff.ts'
import { systemClock, type Clock } from '../common/clock.ts'
import { ChainUnavailableError, isTransientCode } from './errors.ts'

/** True when the node could not be reached or did not answer in time (as opposed to answering with an error). */
export function isUnreachable(error: unknown): boolean {
  if (!(error instanceof BaseError)) return true
  return (
    error.walk(
      (e) =>
        e instanceof HttpRequestError || e instanceof TimeoutError || e instanceof WebSocketRequestError || e instanceof SocketClosedError,
    ) !== null
  )
}

export interface RpcCall {
  method: string
  params: unknown[]
}

/** One answer of a batch: the node's result, or its error for this call alone. */
export type RpcAnswer = { result: unknown } | { error: { code?: number; message: string } }

const TIMEOUT_MS = 10_000
const noAnswer = 'no answer in the batch'
const longestInlineWaitMs = 5_000

/** No URL answered the batch; `retryAfterMs` when one asked to wait (429/503 with Retry-After). */
class UnreachableBatchError extends ChainUnavailableError {
  readonly retryAfterMs: number | undefined
  constructor(message: string, options: { cause?: unknown }, retryAfterMs?: number) {
    super(message, options)
    this.retryAfterMs = retryAfterMs
  }
}

/**
 * Sends calls as one JSON-RPC batch (one HTTP request) to the first http(s) URL that answers; the
 * next URL is tried when one cannot be reached. Chains with only WebSocket URLs, and nodes that refuse
 * batches, get the calls sent side by side through the chain's client instead.
 *
 * A batch that fails in part keeps what succeeded: the calls the node failed this time (-32603,
 * rate limits, a missing answer) are sent again on their own after a short jittered pause, as is
 * the whole batch when no URL answered, a few times (`backoffPolicies.rpcRequest`).
 */
export async function sendRpcBatch(
  urls: string[],
  client: PublicClient,
  calls: RpcCall[],
  options: { random?: () => number; clock?: Clock } = {},
): Promise<RpcAnswer[]> {
  const clock = options.clock ?? systemClock
  const pauses = createBackoff(backoffPolicies.rpcRequest, options.random)
  const started = performance.now()
  // As for single requests: a batch that hung until its timeout may be sent again, not many times.
  const retriesLeft = () => pauses.failures < backoffPolicies.rpcRequest.delaysMs.length && performance.now() - started <= 2 * TIMEOUT_MS
  const answers: RpcAnswer[] = new Array(calls.length)
  let pending = calls.map((_, index) => index)
  while (pending.length > 0) {
    let got: RpcAnswer[]
    try {
      got = await send(
        urls,
        client,
        pending.map((index) => calls[index]!),
        clock,
      )
    } catch (error) {
      if (!(error instanceof ChainUnavailableError) || !retriesLeft()) throw error
      // A Retry-After longer than the pauses of one request is left to the caller's own backoff.
      const askedMs = error instanceof UnreachableBatchError ? (error.retryAfterMs ?? 0) : 0
      if (askedMs > longestInlineWaitMs) throw error
      await sleep(pauses.next(askedMs))
      continue
    }
    pending.forEach((index, k) => (answers[index] = got[k]!))
    pending = pending.filter((index) => isPassingFailure(answers[index]!))
    if (pending.length === 0 || !retriesLeft()) break
    await sleep(pauses.next())
  }
  // A call may fail by itself (a revert); any other error means the node did not do the work (rate
  // limit, internal error), and partial answers would silently drop data: all or nothing.
  const refused = answers.find((answer) => 'error' in answer && !isExecutionFailure(answer.error))
  if (refused && 'error' in refused) {
    throw new ChainUnavailableError(`the chain RPC refused a call: ${refused.error.message}`, { cause: refused.error })
  }
  return answers
}

/** The node failed this call this time (internal error, throttled, no answer): worth sending again. */
function isPassingFailure(answer: RpcAnswer): boolean {
  return 'error' in answer && (isTransientCode(answer.error.code) || answer.error.message === noAnswer)
}

/** True for errors of the call itself (revert, out of gas, bad opcode), as opposed to the node's. */
export function isExecutionFailure(error: { code?: number; message: string }): boolean {
  return (
    error.code === 3 || /revert|out of gas|gas required exceeds|invalid opcode|invalid jump|stack (under|over)flow/i.test(error.message)
  )
}

async function send(urls: string[], client: PublicClient, calls: RpcCall[], clock: Clock): Promise<RpcAnswer[]> {
  if (calls.length === 0) return []
  const httpUrls = urls.filter((url) => /^https?:/.test(url))
  let lastError: unknown
  let retryAfter: number | undefined
  for (const url of httpUrls) {
    let body: unknown
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(calls.map((call, id) => ({ jsonrpc: '2.0', id, method: call.method, params: call.params }))),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      })
      if (!response.ok) {
        retryAfter = retryAfterMs(response.headers.get('retry-after'), clock().getTime()) ?? retryAfter
        throw new Error(`HTTP ${response.status} from the RPC`)
      }
      body = await response.json()
    } catch (error) {
      lastError = error
      continue
    }
    if (Array.isArray(body)) return matchAnswers(body, calls.length)
    return sendSideBySide(client, calls) // the node answers, but not to batches
  }
  if (httpUrls.length > 0 && httpUrls.length === urls.length) {
    throw new UnreachableBatchError('the chain RPC did not answer', { cause: lastError }, retryAfter)
  }
  return sendSideBySide(client, calls)
}

function matchAnswers(body: unknown[], count: number): RpcAnswer[] {
  const answers: RpcAnswer[] = Array.from({ length: count }, () => ({ error: { message: noAnswer } }))
  for (const item of body) {
    if (typeof item !== 'object' || item === null) continue
    const { id, result, error } = item as { id?: unknown; result?: unknown; error?: { code?: number; message?: string } }
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id >= count) continue
    answers[id] = error ? { error: { code: error.code, message: String(error.message ?? 'RPC error') } } : { result }
  }
  return answers
}

async function sendSideBySide(client: PublicClient, calls: RpcCall[]): Promise<RpcAnswer[]> {
  const settled = await Promise.allSettled(calls.map((call) => client.request({ method: call.method, params: call.params } as never)))
  const unreachable = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected' && isUnreachable(s.reason))
  if (unreachable) throw new ChainUnavailableError('the chain RPC did not answer', { cause: unreachable.reason })
  return settled.map((s) => {
    if (s.status === 'fulfilled') return { result: s.value }
    const reason = s.reason as { code?: unknown; details?: unknown; message?: unknown }
    const message = String(reason.details || reason.message || 'RPC error').split('\n')[0]!
    return { error: { code: typeof reason.code === 'number' ? reason.code : undefined, message } }
  })
}
