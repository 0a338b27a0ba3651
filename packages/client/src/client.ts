import createFetchClient from 'openapi-fetch'
import type { components, operations, paths } from './openapi-types.ts'

type JsonBody<T> = T extends { content: { 'application/json': infer B } } ? B : never

/** The body of POST /v2/payments. */
export type PaymentRequest = JsonBody<operations['createPayment']['requestBody']>
/** The body of POST /v2/payments/release. */
export type ReleaseRequest = JsonBody<operations['releasePayment']['requestBody']>
/**
 * A payment tracking record (current shape), as GET /v2/payments/{secret_id} answers it and callbacks carry it
 * for trackings created with `secret_id`, which this client creates.
 */
export type PaymentRecord = components['schemas']['PaymentRecord']
/** The record of a tracking created in the earlier form (with `uuid`). */
export type EarlierPaymentRecord = components['schemas']['EarlierPaymentRecord']
/** The answer of GET /v2/payments/{secret_id}/deliveries. */
export type PaymentDeliveries = JsonBody<operations['listPaymentDeliveries']['responses'][200]>
/** An RFC 9457 problem, as every error of the API is answered. */
export interface Problem {
  type: string
  title: string
  status: number
  detail: string
  code: string
  errors?: { path: string; message: string }[]
}

/** An answer of the API that is not a success: `problem` is its problem+json body, `status` its HTTP status. */
export class PaywatchError extends Error {
  override name = 'PaywatchError'
  readonly status: number
  readonly problem: Problem
  constructor(status: number, problem: Problem) {
    super(`${problem.code ?? status}: ${problem.detail ?? problem.title ?? 'request failed'}`)
    this.status = status
    this.problem = problem
  }
}

export interface ClientOptions {
  /** Where the Paywatch API is served, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string
  /** The account's API key (`x-api-key`). */
  apiKey: string
  /** Another fetch (tests, proxies); the global one by default. */
  fetch?: typeof fetch
}

export interface PaywatchClient {
  payments: {
    /** Creates (or finds again, idempotently) a payment tracking. */
    create(body: PaymentRequest): Promise<PaymentRecord>
    get(secretId: string): Promise<PaymentRecord>
    /** Releases the waiting user of a completed payment (after answering its callback 202). */
    release(body: ReleaseRequest): Promise<PaymentRecord>
    deliveries(secretId: string): Promise<PaymentDeliveries>
  }
  /** The typed openapi-fetch client for every other endpoint. */
  raw: ReturnType<typeof createFetchClient<paths>>
}

/** A client of the Paywatch API for one account: typed answers, errors thrown as `PaywatchError`. */
export function createClient(options: ClientOptions): PaywatchClient {
  const raw = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { 'x-api-key': options.apiKey },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  })
  const answer = <T>(result: { data?: T; error?: unknown; response: Response }): T => {
    if (result.error !== undefined || !result.response.ok) throw new PaywatchError(result.response.status, problemOf(result))
    return result.data as T
  }
  return {
    raw,
    payments: {
      // The API answers in the shape the tracking was created with; trackings made with `secret_id` (this
      // client's) are of the current shape. A `uuid` tracking's record is an EarlierPaymentRecord.
      create: async (body) => answer(await raw.POST('/v2/payments', { body })) as PaymentRecord,
      get: async (secretId) =>
        answer(await raw.GET('/v2/payments/{secret_id}', { params: { path: { secret_id: secretId } } })) as PaymentRecord,
      release: async (body) => answer(await raw.POST('/v2/payments/release', { body })) as PaymentRecord,
      deliveries: async (secretId) =>
        answer(await raw.GET('/v2/payments/{secret_id}/deliveries', { params: { path: { secret_id: secretId } } })),
    },
  }
}

function problemOf(result: { error?: unknown; response: Response }): Problem {
  const error = result.error
  if (error && typeof error === 'object' && 'code' in error) return error as Problem
  const status = result.response.status
  return { type: 'about:blank', title: result.response.statusText || 'Error', status, detail: String(error ?? ''), code: `HTTP_${status}` }
}

export type { components, paths }
