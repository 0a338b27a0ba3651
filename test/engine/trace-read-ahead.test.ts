// A trace's catch-up over blocks read one by one (a native trace's, src/engine/trace-catch-up.ts) holds the
// follower's turn: it reads the blocks ahead of the one it matches, so that the turn waits for one round trip
// per few blocks, not two per block. The blocks are still matched in chain order: while the first block's
// answer is held, the next ones are asked; released, the earlier of two payments in the range is the trace's.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { numberToHex, parseEther, type Hash } from 'viem'
import { startAnvil, type Anvil } from '../support/index.ts'
import { startRpcProxy, type ProxiedRequest, type RpcProxy } from '../support/rpc-proxy.ts'
import type { TestService } from '../support/service.ts'
import { createTrace, engineAtHead, freshAddress, lower, NATIVE, startEngineService, waitFor, waitForFinal } from './support.ts'

let anvil: Anvil
let proxy: RpcProxy
let service: TestService

before(async () => {
  anvil = await startAnvil()
  proxy = await startRpcProxy(anvil.rpcUrl)
  // The held request must not time out (and be sent again) while the test waits for the blocks after it.
  service = await startEngineService(anvil, { chain: { rpc: [proxy.url], rpcTimeoutMs: 60_000 } })
})
after(async () => {
  await service?.close()
  await proxy?.close()
  await anvil?.stop()
})

const callsOf = (request: ProxiedRequest) =>
  (Array.isArray(request.body) ? request.body : [request.body]) as { method: string; params: unknown[] }[]

test('a native trace created 20 blocks late: its blocks are read ahead of the one matched, and the earlier payment wins', async () => {
  const { apiKey } = await service.newAccount()
  const [payer, other] = [anvil.accounts[1]!, anvil.accounts[2]!]
  const receiver = freshAddress()
  const afterBlock = await anvil.publicClient.getBlockNumber()
  // One transaction a block (automine); the 6th and the 13th blocks pay the receiver in full.
  const hashes: Hash[] = []
  for (let n = 1; n <= 20; n++) {
    const pays = n === 6 || n === 13
    hashes.push(await (pays ? payer : other).wallet.sendTransaction({ to: pays ? receiver : freshAddress(), value: parseEther('0.5') }))
  }
  await engineAtHead(service, anvil)

  const first = afterBlock + 1n
  const held = proxy.hold((call) => call.method === 'eth_getBlockByNumber' && call.params[0] === numberToHex(first))
  proxy.reset() // the follower read these blocks as they came: only the catch-up's requests from here
  const id = await createTrace(service, apiKey, { token: NATIVE, receiver, amount: '0.5', afterBlock })
  await held.arrived
  const blocksAsked = () =>
    new Set(
      proxy.requests
        .flatMap(callsOf)
        .filter((call) => call.method === 'eth_getBlockByNumber' && typeof call.params[0] === 'string' && call.params[0].startsWith('0x'))
        .map((call) => BigInt(call.params[0] as string)),
    )
  await waitFor('the next seven blocks asked while the first is held', async () => {
    const asked = blocksAsked()
    for (let n = first + 1n; n < first + 8n; n++) if (!asked.has(n)) return undefined
    return true
  })
  held.release()
  const final = await waitForFinal(service, apiKey, id)
  assert.equal(final.status, 'success')
  assert.equal(final.transaction, lower(hashes[5]!), "the 6th block's payment, not the 13th's")
})
