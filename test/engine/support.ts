// Shared set-up of the chain engine tests: the real service in front of Anvil, payments created
// through the API, and bounded waits for a condition (no sleeping for time to pass).
import assert from 'node:assert/strict'
import type { Address, Hash } from 'viem'
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts'
import { startAnvil, type Anvil, type AnvilAccount } from '../support/index.ts'
import { startRpcProxy, type RpcProxy } from '../support/rpc-proxy.ts'
import { startTestService, type TestService, type TestServiceOptions } from '../support/service.ts'

export const NATIVE = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE'
export const freshAddress = (): Address => privateKeyToAddress(generatePrivateKey())

export interface EngineTestOptions extends TestServiceOptions {
  /** Extra fields of the `ethereum` chain entry (finalityDepth, pollingIntervalMs, rpc…). */
  chain?: Record<string, unknown>
}

/** The whole service following `anvil` as `ethereum`, polling fast. */
export async function startEngineService(anvil: Anvil, options: EngineTestOptions = {}): Promise<TestService> {
  const { chain, ...rest } = options
  return startTestService({
    ...rest,
    // The tests poll the API for statuses: far above the per-key limits of production.
    env: { PAYWATCH_RATE_RPS: '100000', PAYWATCH_RATE_PARALLEL: '1000', PAYWATCH_RATE_DAILY: '100000000', ...rest.env },
    chains: { ethereum: { rpc: [anvil.rpcUrl], chainId: anvil.chainId, pollingIntervalMs: 20, rpcTimeoutMs: 2_000, ...chain } },
  })
}

/** A fresh Anvil, a proxy that records every request to it (support/rpc-proxy.ts), and the service reading through it. */
export interface ProxiedEngine {
  anvil: Anvil
  proxy: RpcProxy
  service: TestService
  close(): Promise<void>
}

export async function startProxiedEngine(options: EngineTestOptions = {}): Promise<ProxiedEngine> {
  const anvil = await startAnvil()
  let proxy: RpcProxy | undefined
  let service: TestService | undefined
  const close = async () => {
    await service?.close()
    await proxy?.close()
    await anvil.stop()
  }
  try {
    proxy = await startRpcProxy(anvil.rpcUrl)
    service = await startEngineService(anvil, { ...options, chain: { ...options.chain, rpc: [proxy.url] } })
  } catch (error) {
    await close() // what did start stops: no Anvil outlives a failed set-up
    throw error
  }
  return { anvil, proxy, service, close }
}

/** Polls `probe` until it returns something other than undefined (bounded: fails after `timeoutMs`). */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

export interface Payment {
  secret_id: string
  [field: string]: unknown
}

let counter = 0

/** POST /v2/payments for `sender`'s next nonce (or the given one); returns the request and response. */
export async function createPayment(
  service: TestService,
  apiKey: string,
  anvil: Anvil,
  sender: AnvilAccount,
  fields: Record<string, unknown>,
): Promise<{ request: Payment; record: Record<string, unknown> }> {
  const nonce = fields.nonce ?? (await anvil.publicClient.getTransactionCount({ address: sender.address }))
  const afterBlock = fields.after_block ?? (await anvil.publicClient.getBlockNumber())
  const request: Payment = {
    blockchain: 'ethereum',
    sender: sender.address,
    nonce: String(nonce),
    token: NATIVE,
    after_block: String(afterBlock),
    secret_id: `secret-${process.pid}-${++counter}-${Math.random().toString(36).slice(2)}`,
    callback: 'https://merchant.example/callback',
    ...fields,
  } as Payment
  for (const key of ['nonce', 'after_block'] as const) request[key] = String(request[key])
  const response = await service.api(apiKey, { method: 'POST', url: '/v2/payments', payload: request })
  assert.ok(response.statusCode === 201 || response.statusCode === 200, response.body)
  return { request, record: response.json() }
}

/** POST /v2/payments without a nonce or sender (a trace, found by receiver): `amount` of `token` to `receiver` after `afterBlock`; its secret id. */
export async function createTrace(
  service: TestService,
  apiKey: string,
  trace: { token: string; receiver: Address; amount: string; afterBlock: bigint; deadline?: bigint },
): Promise<string> {
  const secretId = `trace-${process.pid}-${++counter}-${Math.random().toString(36).slice(2)}`
  const payload = {
    blockchain: 'ethereum',
    token: trace.token,
    receiver: trace.receiver,
    amount: trace.amount,
    after_block: String(trace.afterBlock),
    secret_id: secretId,
    callback: 'https://merchant.example/callback',
    ...(trace.deadline === undefined ? {} : { deadline: Number(trace.deadline) }),
  }
  const response = await service.api(apiKey, { method: 'POST', url: '/v2/payments', payload })
  assert.equal(response.statusCode, 201, response.body)
  return secretId
}

export async function readPayment(service: TestService, apiKey: string, secretId: string): Promise<Record<string, unknown>> {
  const response = await service.api(apiKey, { method: 'GET', url: `/v2/payments/${secretId}` })
  assert.equal(response.statusCode, 200, response.body)
  return response.json()
}

/** Waits until the tracking left `pending`; returns the record. */
export function waitForFinal(service: TestService, apiKey: string, secretId: string, timeoutMs = 10_000): Promise<Record<string, unknown>> {
  return waitFor(
    `payment ${secretId} to complete`,
    async () => {
      const record = await readPayment(service, apiKey, secretId)
      return record.status === 'pending' ? undefined : record
    },
    timeoutMs,
  )
}

/** The engine has processed the chain up to Anvil's current head. */
export async function engineAtHead(service: TestService, anvil: Anvil): Promise<void> {
  const head = await anvil.publicClient.getBlockNumber()
  await waitFor(`engine to reach block ${head}`, async () => {
    const processed = service.engine.runner('ethereum')?.follower?.state.head?.number
    return processed !== undefined && processed >= head ? true : undefined
  })
}

export const lower = (value: string | Hash): string => value.toLowerCase()

/** The RPC requests of `method` the service has made to the ethereum chain so far (its `/metrics`). */
export async function rpcRequests(service: TestService, method: string): Promise<number> {
  const text = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
  return Number(new RegExp(`paywatch_rpc_requests_total\\{chain="ethereum",method="${method}"\\} (\\d+)`).exec(text)?.[1] ?? 0)
}
