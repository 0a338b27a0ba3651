// New trackings are checked in batches (src/engine/fast-path-checks.ts): one latest-block request and one
// JSON-RPC batch of transaction counts sort out the trackings whose nonce is still unused; only the
// others are checked one by one. A burst of creates costs a few requests per hundred trackings instead of
// two per tracking, and a payment mined before its tracking is still found among them.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { parseEther } from 'viem'
import { createChainEngine, type ChainEngine } from '../../src/engine/chain-engine.ts'
import { createAccount } from '../../src/store/accounts.ts'
import { sendNative, type Anvil } from '../support/index.ts'
import type { RpcProxy } from '../support/rpc-proxy.ts'
import type { TestService } from '../support/service.ts'
import { pendingOfAccount, insertTestTracking } from '../support/trackings.ts'
import { freshAddress, startProxiedEngine, type ProxiedEngine } from './support.ts'

let proxied: ProxiedEngine
let anvil: Anvil
let proxy: RpcProxy
let service: TestService
let engine: ChainEngine

before(async () => {
  proxied = await startProxiedEngine({ background: false })
  ;({ anvil, proxy, service } = proxied)
  engine = createChainEngine(service.common, {
    database: service.database,
    chains: service.chains,
    events: service.events,
    fallbackReadiness: async () => [],
  })
})
after(async () => {
  await proxied?.close()
})

test('300 new trackings are sieved in a few requests, and the one already paid is judged', async () => {
  const db = service.database.db
  const account = await createAccount(db, 'sieve')
  const alice = anvil.accounts[1]!
  const receiver = freshAddress()
  const afterBlock = await anvil.publicClient.getBlockNumber()
  const nonce = await anvil.publicClient.getTransactionCount({ address: alice.address })
  await sendNative(anvil, alice, receiver, parseEther('0.25'))
  const unpaid = await Promise.all(Array.from({ length: 300 }, () => insertTestTracking(db, account.id, { transaction: null, afterBlock })))
  // Paid before it was created, without naming its transaction: found through the sender's count.
  const paid = await insertTestTracking(db, account.id, {
    sender: alice.address.toLowerCase(),
    nonce: BigInt(nonce),
    receiver: receiver.toLowerCase(),
    amount: '0.25',
    confirmations: 1,
    afterBlock,
    transaction: null,
  })

  proxy.reset()
  await Promise.all([...unpaid, paid].map((tracking) => engine.check(tracking)))
  const counts = proxy.requests.flatMap((request) => request.methods).filter((method) => method === 'eth_getTransactionCount')
  assert.ok(counts.length >= 301, 'every sender was asked for its count')
  // Before: a latest block and a count per tracking, 602 requests at least.
  assert.ok(proxy.requests.length <= 30, `${proxy.requests.length} requests for 301 trackings`)

  const row = await db.selectFrom('trackings').select(['status', 'transaction']).where('id', '=', paid.id).executeTakeFirstOrThrow()
  assert.equal(row.status, 'success')
  assert.equal(await pendingOfAccount(db, account.id), 300, 'the unpaid ones were checked and left pending')
})
