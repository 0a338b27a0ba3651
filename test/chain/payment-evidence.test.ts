// The evidence reader's edges: trace support learned once per chain through an RPC proxy that
// refuses or stalls `debug_traceTransaction` (and `trace_transaction`, its fallback), retryable errors, when a trace is skipped, and the
// pure helpers (Transfer logs, call frames, finding a nonce's consumer).
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import { createPublicClient, http, type Address } from 'viem'
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts'
import { isRetryable } from '../../src/common/errors.ts'
import { isMethodUnavailable, isTransient, RetryableChainError } from '../../src/chain/errors.ts'
import { createEvidenceReader, findConsumer } from '../../src/chain/payment-evidence.ts'
import { erc20Transfers, internalValueTransfers, TRANSFER_TOPIC } from '../../src/chain/transfers.ts'
import { NATIVE_TOKEN } from '../../src/domain/judge.ts'
import { deployRouter, routerPayNative, sendNative, startAnvil, type Anvil } from '../support/index.ts'

type TraceMode = 'forward' | 'not-found' | 'plan' | 'unavailable' | 'stall' | 'parity-only'

/** A JSON-RPC proxy in front of anvil that answers `debug_traceTransaction` as told and counts it. */
interface Proxy {
  url: string
  mode: TraceMode
  traceCalls: number
  close(): Promise<void>
}

async function startProxy(upstream: string): Promise<Proxy> {
  const stalled = new Set<() => void>()
  const proxy: Proxy = { url: '', mode: 'forward', traceCalls: 0, close: async () => {} }
  const server: Server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk: Buffer) => (body += chunk.toString()))
    req.on('end', () => {
      const call = JSON.parse(body) as { id: number; method: string }
      const answer = (payload: unknown, status = 200) => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload))
      }
      const rpcError = (code: number, message: string) => answer({ jsonrpc: '2.0', id: call.id, error: { code, message } })
      if (proxy.mode === 'parity-only' && call.method === 'debug_traceTransaction') {
        return rpcError(-32601, 'the method debug_traceTransaction does not exist/is not available')
      }
      // Both trace methods fail alike (trace_transaction is the fallback of debug_traceTransaction).
      if (call.method === 'debug_traceTransaction' || call.method === 'trace_transaction') {
        proxy.traceCalls++
        if (proxy.mode === 'not-found') return rpcError(-32601, 'the method debug_traceTransaction does not exist/is not available')
        if (proxy.mode === 'plan') return rpcError(-32000, 'debug_traceTransaction is not available on the Free tier')
        if (proxy.mode === 'unavailable') return answer({ error: 'upstream overloaded' }, 503)
        if (proxy.mode === 'stall') return void stalled.add(() => res.destroy())
      }
      fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
        .then(async (r) => res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text()))
        .catch(() => res.writeHead(502).end())
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  proxy.close = async () => {
    for (const release of stalled) release()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  return proxy
}

let anvil: Anvil
let router: Address
let proxy: Proxy
before(async () => {
  anvil = await startAnvil()
  router = await deployRouter(anvil)
  proxy = await startProxy(anvil.rpcUrl)
})
after(async () => {
  await proxy?.close()
  await anvil?.stop()
})

const fresh = (): Address => privateKeyToAddress(generatePrivateKey())
const readerThroughProxy = () =>
  createEvidenceReader(createPublicClient({ transport: http(proxy.url, { retryCount: 0, timeout: 150 }), cacheTime: 0 }))

async function routerPayment(): Promise<{ hash: `0x${string}`; receiver: Address }> {
  const receiver = fresh()
  const receipt = await routerPayNative(anvil, router, anvil.accounts[1]!, { receiver, value: 700n })
  return { hash: receipt.transactionHash, receiver }
}

test('an RPC without debug_traceTransaction is detected once and then skipped; value to the router still counts', async () => {
  proxy.mode = 'not-found'
  proxy.traceCalls = 0
  const reader = readerThroughProxy()
  const first = await routerPayment()
  const evidence = await reader.fromHash(first.hash, { native: true })
  assert.deepEqual(evidence?.transfers, [{ token: NATIVE_TOKEN, to: router.toLowerCase(), amount: 700n }])
  assert.equal(reader.traceSupport(), 'unsupported')
  const second = await routerPayment()
  await reader.fromHash(second.hash, { native: true })
  assert.equal(proxy.traceCalls, 2, 'each trace method asked only once per chain')
})

test('without debug_traceTransaction, trace_transaction gives the internal calls', async () => {
  proxy.mode = 'parity-only'
  const reader = readerThroughProxy()
  const { hash, receiver } = await routerPayment()
  const evidence = await reader.fromHash(hash, { native: true })
  assert.deepEqual(evidence?.transfers, [
    { token: NATIVE_TOKEN, to: router.toLowerCase(), amount: 700n },
    { token: NATIVE_TOKEN, to: receiver.toLowerCase(), amount: 700n },
  ])
  assert.equal(reader.traceSupport(), 'supported')
  proxy.mode = 'forward'
})

test('a provider refusing the method with a generic code and a plan message counts as unsupported', async () => {
  proxy.mode = 'plan'
  const reader = readerThroughProxy()
  await reader.fromHash((await routerPayment()).hash, { native: true })
  assert.equal(reader.traceSupport(), 'unsupported')
})

test('an overloaded RPC (HTTP 503) is retryable, not "unsupported"', async () => {
  proxy.mode = 'unavailable'
  const reader = readerThroughProxy()
  const { hash } = await routerPayment()
  await assert.rejects(reader.fromHash(hash, { native: true }), (e) => e instanceof RetryableChainError && isRetryable(e))
  assert.equal(reader.traceSupport(), 'unknown')
  proxy.mode = 'forward'
  const evidence = await reader.fromHash(hash, { native: true })
  assert.equal(evidence?.transfers.length, 2, 'router value and the internal call to the receiver')
  assert.equal(reader.traceSupport(), 'supported')
})

test('a trace that times out is retryable and leaves support unknown', async () => {
  proxy.mode = 'stall'
  const reader = readerThroughProxy()
  const { hash } = await routerPayment()
  await assert.rejects(reader.fromHash(hash, { native: true }), (e) => e instanceof RetryableChainError && isTransient(e.cause))
  assert.equal(reader.traceSupport(), 'unknown')
  proxy.mode = 'forward'
})

test('once traces worked, a refusal from another RPC URL is retryable, not remembered', async () => {
  proxy.mode = 'forward'
  const reader = readerThroughProxy()
  await reader.fromHash((await routerPayment()).hash, { native: true })
  assert.equal(reader.traceSupport(), 'supported')
  proxy.mode = 'not-found'
  await assert.rejects(reader.fromHash((await routerPayment()).hash, { native: true }), RetryableChainError)
  assert.equal(reader.traceSupport(), 'supported')
  proxy.mode = 'forward'
})

test('no trace for token payments, nor for a plain transfer that ran no code', async () => {
  proxy.mode = 'forward'
  proxy.traceCalls = 0
  const reader = readerThroughProxy()
  const { hash } = await routerPayment()
  const token = await reader.fromHash(hash, { native: false })
  assert.deepEqual(token?.transfers, [{ token: NATIVE_TOKEN, to: router.toLowerCase(), amount: 700n }])
  const receiver = fresh()
  const plain = await sendNative(anvil, anvil.accounts[1]!, receiver, 5n)
  const evidence = await reader.fromHash(plain.transactionHash, { native: true })
  assert.deepEqual(evidence?.transfers, [{ token: NATIVE_TOKEN, to: receiver.toLowerCase(), amount: 5n }])
  assert.equal(proxy.traceCalls, 0)
})

test('an unreachable RPC is a retryable error, an unknown hash is null', async () => {
  const down = createEvidenceReader(createPublicClient({ transport: http('http://127.0.0.1:1', { retryCount: 0 }) }))
  await assert.rejects(down.fromHash(`0x${'1'.repeat(64)}`, { native: false }), (e) => e instanceof RetryableChainError)
  assert.equal(await readerThroughProxy().fromHash(`0x${'1'.repeat(64)}`, { native: true }), null)
})

test('fromFetched refuses a receipt of another transaction', async () => {
  const reader = createEvidenceReader(anvil.publicClient)
  const a = await sendNative(anvil, anvil.accounts[1]!, fresh(), 1n)
  const b = await sendNative(anvil, anvil.accounts[1]!, fresh(), 1n)
  const tx = await anvil.publicClient.getTransaction({ hash: a.transactionHash })
  await assert.rejects(reader.fromFetched(tx, b, { native: false }), /does not belong/)
  const mined = await reader.fromFetched(tx, a, { native: false })
  assert.equal(mined.nonce, BigInt(tx.nonce))
  assert.equal(mined.blockNumber, a.blockNumber)
})

test('erc20Transfers: Transfer logs with three topics only, any from, summable', () => {
  const pad = (a: string) => `0x${a.slice(2).padStart(64, '0')}`
  const [token, from, to] = ['0x' + 'A'.repeat(40), '0x' + '1'.repeat(40), '0x' + 'B'.repeat(40)]
  const value = (n: bigint) => `0x${n.toString(16).padStart(64, '0')}`
  assert.deepEqual(
    erc20Transfers([
      { address: token, topics: [TRANSFER_TOPIC, pad(from), pad(to)], data: value(5n) },
      { address: token, topics: [TRANSFER_TOPIC, pad(from), pad(to), pad('0x07')], data: '0x' }, // ERC-721
      { address: token, topics: [TRANSFER_TOPIC, pad(from), pad(to)], data: value(6n), removed: true },
      { address: token, topics: [`0x${'0'.repeat(64)}`, pad(from), pad(to)], data: value(9n) },
    ]),
    [{ token: token.toLowerCase(), to: to.toLowerCase(), amount: 5n }],
  )
})

test('internalValueTransfers: nested value CALLs, not the top frame, nothing under a reverted frame', () => {
  const r = '0x' + 'c'.repeat(40)
  const transfers = internalValueTransfers({
    type: 'CALL',
    to: '0xrouter',
    value: '0x64',
    calls: [
      { type: 'CALL', to: r, value: '0x0a' },
      { type: 'STATICCALL', to: r },
      { type: 'DELEGATECALL', to: r, value: '0x64' },
      { type: 'CALL', to: '0xinner', value: '0x0', calls: [{ type: 'CALL', to: r, value: '0x05' }] },
      { type: 'CALL', to: r, value: '0x63', error: 'execution reverted', calls: [{ type: 'CALL', to: r, value: '0x01' }] },
      { type: 'SELFDESTRUCT', to: r, value: '0x02' },
    ],
  })
  assert.deepEqual(
    transfers.map((t) => t.amount),
    [10n, 5n, 2n],
  )
  assert.deepEqual(internalValueTransfers({ type: 'CALL', error: 'out of gas', calls: [{ type: 'CALL', to: r, value: '0x1' }] }), [])
})

test('findConsumer matches sender case-insensitively and the exact nonce', () => {
  const txs = [
    { hash: '0x1', from: '0xAbC0000000000000000000000000000000000001', nonce: 4 },
    { hash: '0x2', from: '0xabc0000000000000000000000000000000000001', nonce: 5 },
    { hash: '0x3', from: '0xdef0000000000000000000000000000000000002', nonce: 5 },
  ]
  assert.equal(findConsumer(txs, '0xABC0000000000000000000000000000000000001', 5n)?.hash, '0x2')
  assert.equal(findConsumer(txs, '0xdef0000000000000000000000000000000000002', 4n), null)
  assert.equal(findConsumer([], '0xdef0000000000000000000000000000000000002', 4n), null)
})

test('isMethodUnavailable tells a refused method from a failing call', () => {
  assert.equal(isMethodUnavailable({ code: -32601, message: 'Method not found' }), true)
  assert.equal(isMethodUnavailable(new Error('wrapped', { cause: { code: -32004 } })), true)
  assert.equal(isMethodUnavailable({ code: -32000, shortMessage: 'transaction not found' }), false)
  assert.equal(isMethodUnavailable(new RetryableChainError('timeout')), false)
})
