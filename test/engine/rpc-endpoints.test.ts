// Several RPC URLs: a dead first URL is cooled down and asked rarely while the next one serves;
// an RPC that was unreachable at start is checked (eth_chainId) before the chain is followed; and
// the failover tells a node's refusal (try the next URL) from a node's failure (also cool it down).
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { HttpRequestError, parseEther, RpcRequestError, TimeoutError } from 'viem'
import { classifyRpcFailure } from '../../src/chain/failover-transport.ts'
import { sendNative, startAnvil, type Anvil } from '../support/index.ts'
import { startFaultyRpcProxy, type FaultyRpcProxy } from '../support/faulty-rpc-proxy.ts'
import type { TestService } from '../support/service.ts'
import { createPayment, engineAtHead, freshAddress, startEngineService, waitFor, waitForFinal } from './support.ts'

const cleanup: (() => Promise<void>)[] = []
after(async () => {
  for (const step of cleanup.reverse()) await step()
})

async function setUp(): Promise<{ anvil: Anvil; proxy: FaultyRpcProxy }> {
  const anvil = await startAnvil()
  cleanup.push(() => anvil.stop())
  const proxy = await startFaultyRpcProxy(anvil.rpcUrl, { drop: 1 })
  cleanup.push(() => proxy.close())
  return { anvil, proxy }
}

async function serve(anvil: Anvil, chain: Record<string, unknown>): Promise<TestService> {
  const service = await startEngineService(anvil, { chain })
  cleanup.push(() => service.close())
  return service
}

test('a dead first URL is skipped after it failed, the second one serves', async (t) => {
  const { anvil, proxy: dead } = await setUp()
  const service = await serve(anvil, { rpc: [dead.url, anvil.rpcUrl] })
  const { apiKey } = await service.newAccount()
  const sender = anvil.accounts[1]!
  const receiver = freshAddress()
  const { request } = await createPayment(service, apiKey, anvil, sender, { receiver, amount: '1', confirmations: 3 })
  await sendNative(anvil, sender, receiver, parseEther('1'))
  await sendNative(anvil, anvil.accounts[2]!, freshAddress(), 1n)
  await sendNative(anvil, anvil.accounts[2]!, freshAddress(), 1n)
  assert.equal((await waitForFinal(service, apiKey, request.secret_id)).status, 'success')

  assert.ok(dead.injected.drop >= 1, 'the dead URL was tried')

  // From here on (its tries at start, one per kind of request, are behind it): asked rarely while the next one serves.
  const requests = async () => {
    const metrics = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
    return [...metrics.matchAll(/paywatch_rpc_requests_total\{chain="ethereum",method="[^"]+"\} (\d+)/g)].reduce(
      (s, m) => s + Number(m[1]),
      0,
    )
  }
  const [deadBefore, totalBefore] = [dead.injected.drop, await requests()]
  for (let k = 0; k < 10; k++) {
    await anvil.testClient.mine({ blocks: 1 })
    await engineAtHead(service, anvil)
  }
  const [asked, total] = [dead.injected.drop - deadBefore, (await requests()) - totalBefore]
  t.diagnostic(`the dead URL: ${asked} of ${total} requests over 10 blocks`)
  assert.ok(total >= 10, `the service followed 10 blocks (${total} requests)`)
  assert.ok(asked * 4 < total, `the dead URL is cooled down: ${asked} of ${total} requests over 10 blocks`)
})

test('an RPC unreachable at start is checked before following: another network disables the chain', async () => {
  const { anvil, proxy } = await setUp()
  // Configured as Ethereum mainnet (chain id 1); Anvil answers 31337 once it is reachable.
  const service = await serve(anvil, { rpc: [proxy.url], chainId: 1, rpcTimeoutMs: 200 })
  assert.ok(service.chains.get('ethereum'), 'unreachable at start: not disabled yet')
  assert.equal(service.engine.runner('ethereum')!.status === 'following', false)
  proxy.setRates({ drop: 0 })
  await waitFor('the chain to be disabled', async () => (service.engine.runner('ethereum')!.status === 'disabled' ? true : undefined))
  assert.equal(service.engine.runner('ethereum')!.follower, undefined, 'never followed')
  const ready = await service.app.inject({ method: 'GET', url: '/readyz' })
  assert.equal(ready.statusCode, 503)
  const [chain, ...others] = ready.json().chains
  assert.deepEqual(others, [])
  assert.deepEqual(
    { name: chain.name, ok: chain.ok, error: chain.error },
    { name: 'ethereum', ok: false, error: 'the RPC serves another network' },
  )
  assert.deepEqual(
    chain.providers.map((p: { url: string; state: string }) => [p.url, p.state]),
    [[proxy.url, 'refused']],
    'the provider is listed as refused',
  )
})

test('failures are told apart: a node refusing is not a node failing', () => {
  const rpcError = (code: number, message: string) => new RpcRequestError({ body: {}, error: { code, message }, url: 'http://rpc' })
  assert.equal(classifyRpcFailure(rpcError(3, 'execution reverted')), 'answer')
  assert.equal(classifyRpcFailure(rpcError(-32602, 'invalid params')), 'answer')
  assert.equal(classifyRpcFailure(rpcError(-32601, 'the method debug_traceTransaction does not exist')), 'refused')
  assert.equal(classifyRpcFailure(rpcError(-32000, 'missing trie node')), 'refused')
  assert.equal(classifyRpcFailure(rpcError(-32005, 'limit exceeded')), 'endpoint')
  assert.equal(classifyRpcFailure(rpcError(-32603, 'internal error')), 'endpoint')
  assert.equal(classifyRpcFailure(new HttpRequestError({ url: 'http://rpc', status: 502 })), 'endpoint')
  assert.equal(classifyRpcFailure(new TimeoutError({ body: {}, url: 'http://rpc' })), 'endpoint')
  assert.equal(classifyRpcFailure(new Error('socket hang up')), 'endpoint')
})
