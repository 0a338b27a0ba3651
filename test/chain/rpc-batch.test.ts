// A JSON-RPC batch in which the node fails some calls this time (-32603, rate limit): the calls
// that succeeded are kept, only the failed ones are sent again; a refusal no retry will change
// still fails the whole batch at once (partial answers would silently drop data).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { createRpcClient } from '../../src/chain/rpc-client.ts'
import { sendRpcBatch } from '../../src/chain/rpc-batch.ts'
import { builtInChains } from '../../src/config/chains.ts'
import { startAnvil, type Anvil } from '../support/index.ts'
import { startRpcProxy, type RpcProxy } from '../support/rpc-proxy.ts'

let anvil: Anvil
let proxy: RpcProxy

before(async () => {
  anvil = await startAnvil()
  proxy = await startRpcProxy(anvil.rpcUrl)
})
after(async () => {
  await proxy?.close()
  await anvil?.stop()
})

const balanceCalls = () => anvil.accounts.slice(0, 3).map((account) => ({ method: 'eth_getBalance', params: [account.address, 'latest'] }))

test('a partly failed batch keeps what succeeded and sends only the failed calls again', async () => {
  const chain = { ...builtInChains().ethereum!, name: 'batch-test', chainId: anvil.chainId, rpc: [proxy.url], rpcTimeoutMs: 2_000 }
  const client = createRpcClient(chain)
  const failing = anvil.accounts[1]!.address
  let refusals = 2
  proxy.setCallRefusal(({ params }) =>
    params[0] === failing && refusals-- > 0 ? { code: -32603, message: 'internal error (test)' } : null,
  )
  proxy.reset()
  const answers = await sendRpcBatch(chain.rpc, client, balanceCalls(), { random: () => 0.5 })
  const expected = await Promise.all(anvil.accounts.slice(0, 3).map((a) => anvil.publicClient.getBalance({ address: a.address })))
  assert.deepEqual(
    answers.map((answer) => ('result' in answer ? BigInt(answer.result as string) : answer.error.message)),
    expected,
  )
  assert.deepEqual(
    proxy.requests.map((request) => request.methods.length),
    [3, 1, 1],
    'the succeeded calls were not sent again',
  )

  proxy.setCallRefusal(({ params }) => (params[0] === failing ? { code: -32601, message: 'method not found (test)' } : null))
  proxy.reset()
  await assert.rejects(sendRpcBatch(chain.rpc, client, balanceCalls()), /method not found \(test\)/)
  assert.equal(proxy.requests.length, 1, 'a refusal no retry changes is not retried')
  proxy.setCallRefusal(null)
})
