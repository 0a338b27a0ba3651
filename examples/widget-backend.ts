// A merchant backend for DePay's payment widget, on plain Node `http` (docs/api.md, "A backend for the
// DePay widget"): the widget's `track.endpoint` (POST /track), `track.poll.endpoint` (POST /poll), and the
// Paywatch callback (POST /callback, examples/receiver-core.ts). Widget 12 and 13 bodies both.
//   PAYWATCH_API_KEY=… SHOP_RECEIVER=0x… SHOP_SECRET=… node examples/widget-backend.ts   (port 4001)
// and in the page: DePayWidgets.Payment({ …, track: { endpoint: '…/track', poll: { endpoint: '…/poll' } } })
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createClient, PaywatchError, type PaymentRequest } from '@paywatch/client'
import { createCallbackHandler, type ReceiverOptions } from './receiver-core.ts'
import {
  paymentRequestOf,
  pollAnswerOf,
  secretIdOfPoll,
  WidgetBodyError,
  type WidgetBodyOptions,
  type WidgetPaymentRequest,
  type WidgetPollBody,
  type WidgetTrackBody,
} from './widget-bodies.ts'

export interface WidgetBackendOptions extends Omit<WidgetBodyOptions, 'callback'> {
  paywatchUrl: string
  apiKey: string
  /** Where Paywatch reaches this backend (its callback goes to `${publicUrl}/callback`); default: where it listens. */
  publicUrl?: string
  /** The shop page's origin, allowed to call /track and /poll from the browser (CORS). */
  allowOrigin?: string
  /**
   * The widget's body comes from the payer's browser: compare token, amount and receiver with your order
   * here before Paywatch tracks it (false: 403).
   */
  check?: (request: WidgetPaymentRequest, body: WidgetTrackBody) => boolean | Promise<boolean>
  /** How /callback answers: 200 at once (default) or 202 and a release later (examples/receiver-core.ts). */
  callbacks?: Pick<ReceiverOptions, 'decide' | 'forwardTo' | 'onPayment' | 'webhookSecret'>
}

interface Answer {
  status: number
  body?: unknown
}

/** The /track and /poll handlers (framework-free: JSON body in, status and JSON out). */
export function createWidgetHandlers(options: WidgetBackendOptions & { publicUrl: string }) {
  const client = createClient({ baseUrl: options.paywatchUrl, apiKey: options.apiKey })
  const bodyOptions: WidgetBodyOptions = { ...options, callback: `${options.publicUrl}/callback` }
  const failure = (error: unknown): Answer => {
    if (error instanceof WidgetBodyError) return { status: 400, body: { error: error.message } }
    // Paywatch's own verdict on the request (400 invalid, 409 the same payment under other fields): passed on.
    if (error instanceof PaywatchError && error.status < 500) return { status: error.status, body: { error: error.problem.detail } }
    throw error
  }
  return {
    /** Trace (before the transaction) and track (after): the same tracking, found again by its secret id. */
    async track(body: WidgetTrackBody): Promise<Answer> {
      try {
        const request = paymentRequestOf(body, bodyOptions)
        if (options.check && !(await options.check(request, body))) return { status: 403, body: { error: 'not a payment of this shop' } }
        // Widget 13's request has no nonce and carries a deadline (docs/api.md, "Payments without a nonce").
        const record = await client.payments.create(request as PaymentRequest).catch(async (error: unknown) => {
          // The track after a trace names the transaction: where Paywatch keeps the trace as it is
          // (409), the trace finds that transaction by itself; anything else is an answer to pass on.
          if (!(error instanceof PaywatchError && error.status === 409 && request.transaction)) throw error
          const traced = await client.payments.get(request.secret_id!)
          if (traced.transaction && traced.transaction.toLowerCase() !== request.transaction.toLowerCase()) throw error
          return traced
        })
        return { status: 201, body: { status: record.status } }
      } catch (error) {
        return failure(error)
      }
    },
    /** 200 `{status, forward_to}` once the user is released, 404 before (the widget polls every 5 s). */
    async poll(body: WidgetPollBody): Promise<Answer> {
      try {
        const record = await client.payments.get(secretIdOfPoll(body, options))
        const answer = pollAnswerOf(record)
        return answer ? { status: 200, body: answer } : { status: 404 }
      } catch (error) {
        if (error instanceof PaywatchError && error.status === 404) return { status: 404 }
        return failure(error)
      }
    },
  }
}

/** The backend on `port` (0: any free port), listening on 127.0.0.1. */
export async function startWidgetBackend(options: WidgetBackendOptions, port: number): Promise<Server> {
  let handlers: ReturnType<typeof createWidgetHandlers> | undefined
  let callback: ReturnType<typeof createCallbackHandler> | undefined
  const cors = options.allowOrigin
    ? { 'access-control-allow-origin': options.allowOrigin, 'access-control-allow-headers': 'content-type', vary: 'origin' }
    : {}
  const reply = (response: ServerResponse, answer: Answer) => {
    const body = answer.body === undefined ? undefined : JSON.stringify(answer.body)
    response.writeHead(answer.status, { ...cors, ...(body ? { 'content-type': 'application/json' } : {}) }).end(body)
  }
  const server = createServer(async (request: IncomingMessage, response) => {
    if (request.method === 'OPTIONS') return void response.writeHead(204, { ...cors, 'access-control-allow-methods': 'POST' }).end()
    if (request.method !== 'POST') return void response.writeHead(405, cors).end()
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const raw = Buffer.concat(chunks)
    try {
      if (request.url === '/callback') {
        // The raw bytes, exactly as sent: the signature is over them.
        const answer = await callback!({ body: raw, headers: request.headers })
        return void response.writeHead(answer.status, answer.body ? { 'content-type': 'application/json' } : {}).end(answer.body)
      }
      let body: unknown
      try {
        body = JSON.parse(raw.toString('utf8'))
      } catch {
        return reply(response, { status: 400, body: { error: 'the body is not JSON' } })
      }
      if (typeof body !== 'object' || body === null) return reply(response, { status: 400, body: { error: 'the body is not an object' } })
      if (request.url === '/track') return reply(response, await handlers!.track(body as WidgetTrackBody))
      if (request.url === '/poll') return reply(response, await handlers!.poll(body as WidgetPollBody))
      reply(response, { status: 404 })
    } catch (error) {
      console.error(error)
      reply(response, { status: 502, body: { error: 'Paywatch could not be asked; retry' } })
    }
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  const publicUrl = options.publicUrl ?? `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  handlers = createWidgetHandlers({ ...options, publicUrl })
  callback = createCallbackHandler({ paywatchUrl: options.paywatchUrl, apiKey: options.apiKey, ...options.callbacks })
  return server
}

if (import.meta.main) {
  const env = process.env
  const port = Number(env.PORT ?? 4001)
  if (!env.SHOP_RECEIVER || !env.SHOP_SECRET)
    throw new Error('set SHOP_RECEIVER (your receiving address) and SHOP_SECRET (any long random string)')
  await startWidgetBackend(
    {
      paywatchUrl: env.PAYWATCH_URL ?? 'http://127.0.0.1:3000',
      apiKey: env.PAYWATCH_API_KEY ?? '',
      receiver: env.SHOP_RECEIVER,
      secret: env.SHOP_SECRET,
      publicUrl: env.SHOP_PUBLIC_URL,
      allowOrigin: env.SHOP_ORIGIN,
      forwardTo: env.SHOP_FORWARD_TO,
    },
    port,
  )
  console.log(`widget backend on http://127.0.0.1:${port}: track.endpoint /track, track.poll.endpoint /poll, callback /callback`)
}
