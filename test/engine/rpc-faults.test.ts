// The chain's two RPC URLs are proxies that fail a third of the requests (HTTP 500/429, JSON-RPC
// errors, dropped connections, requests hanging past the timeout): every payment is still judged,
// and judged correctly. A failing RPC delays a judgement, it never decides one.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { parseEther, type Address } from 'viem'
import { deployToken, mine, mintToken, sendNative, startAnvil, transferToken, type Anvil } from '../support/index.ts'
import { startFaultyRpcProxy, type FaultyRpcProxy } from '../support/faulty-rpc-proxy.ts'
import type { TestService } from '../support/service.ts'
import { createPayment, freshAddress, lower, startEngineService, waitFor, waitForFinal } from './support.ts'

let anvil: Anvil
let proxies: FaultyRpcProxy[]
let service: TestService
let apiKey: string
let token: Address

before(async () => {
  anvil = await startAnvil()
  token = await deployToken(anvil, 'USD Coin', 'USDC', 6)
  await mintToken(anvil, token, anvil.accounts[2]!.address, 1_000_000_000n)
  // Healthy while the service starts (its eth_chainId check), faulty from the first payment on.
  proxies = await Promise.all([1, 2].map((seed) => startFaultyRpcProxy(anvil.rpcUrl, { seed, hangMs: 1_000 })))
  service = await startEngineService(anvil, { chain: { rpc: proxies.map((p) => p.url), rpcTimeoutMs: 250 } })
  ;({ apiKey } = await service.newAccount())
  // Following before the faults start: a follower starts at the head, and blocks mined before it
  // began are not its to read (trackings created before are checked by the fast path).
  await waitFor('the follower at the head', async () => (service.engine.runner('ethereum')?.follower?.state.head ? true : undefined))
  for (const proxy of proxies) proxy.setRates({ error: 0.2, hang: 0.07, drop: 0.06 })
})
after(async () => {
  await service?.close()
  await Promise.all(proxies.map((p) => p.close()))
  await anvil?.stop()
})

/** POST /v2/payments as an integrator does: re-attempted while it answers anything but 200/201. */
async function track(sender: (typeof anvil.accounts)[number], fields: Record<string, unknown>) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await createPayment(service, apiKey, anvil, sender, fields)
    } catch (error) {
      if (attempt >= 10) throw error
    }
  }
}

test('every payment is judged correctly through failing RPCs', async () => {
  const [, alice, bob, carol, dave, erin] = anvil.accounts
  const receiver = freshAddress()

  const nativeOk = await track(alice!, { receiver, amount: '1' })
  const tokenOk = await track(bob!, { receiver, token, amount: '3' })
  const short = await track(carol!, { receiver, amount: '5', confirmations: 2 })
  const wrongReceiver = await track(dave!, { receiver, amount: '1' })
  const nativeTx = await sendNative(anvil, alice!, receiver, parseEther('1'))
  const tokenTx = await transferToken(anvil, token, bob!, receiver, 3_000_000n)
  await sendNative(anvil, carol!, receiver, parseEther('4'))
  await sendNative(anvil, dave!, freshAddress(), parseEther('1'))
  // Mined before it is tracked: found by the fast path through the same failing RPCs.
  const afterBlock = await anvil.publicClient.getBlockNumber()
  const nonce = await anvil.publicClient.getTransactionCount({ address: erin!.address })
  const early = await sendNative(anvil, erin!, receiver, parseEther('2'))
  await mine(anvil, 2)
  const afterTheFact = await track(erin!, { receiver, amount: '2', nonce, after_block: afterBlock })

  const results = await Promise.all(
    [nativeOk, tokenOk, short, wrongReceiver, afterTheFact].map((p) => waitForFinal(service, apiKey, p.request.secret_id, 30_000)),
  )
  assert.deepEqual(
    results.map((r) => [r.status, r.failed_reason ?? null]),
    [
      ['success', null],
      ['success', null],
      ['failed', 'AMOUNT_MISMATCH'],
      ['failed', 'RECEIVER_MISMATCH'],
      ['success', null],
    ],
  )
  assert.equal(results[0]!.transaction, lower(nativeTx.transactionHash))
  assert.equal(results[1]!.transaction, lower(tokenTx.transactionHash))
  assert.equal(results[4]!.transaction, lower(early.transactionHash))

  const injected = proxies.reduce((sum, p) => sum + p.injected.error + p.injected.hang + p.injected.drop, 0)
  assert.ok(injected >= 5, `failures were injected (${injected})`)
  const metrics = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
  const errors = [...metrics.matchAll(/paywatch_rpc_errors_total\{chain="ethereum",method="[^"]+"\} (\d+)/g)].reduce(
    (s, m) => s + Number(m[1]),
    0,
  )
  assert.ok(errors >= injected / 2, `RPC errors are counted (${errors})`)
  // Per provider as well: each proxy's failures are its own.
  for (const proxy of proxies) {
    const label = proxy.url.replace(/[.:/]/g, '\\$&')
    const counted = Number(
      new RegExp(`paywatch_rpc_provider_errors_total\\{chain="ethereum",provider="${label}"\\} (\\d+)`).exec(metrics)?.[1],
    )
    assert.ok(counted >= 1, `${proxy.url}: errors counted per provider (${counted})`)
  }
})
