// New trackings are sieved in rounds, one per head the follower learns of (src/engine/fast-path-checks.ts):
// a burst of creates costs about one transaction-count request per block, asked at the follower's head,
// and a round within the same head waits for the next one, or for the round gap on the injected clock.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { createAccount } from '../../src/store/accounts.ts'
import { manualClock } from '../support/clock.ts'
import type { Anvil } from '../support/index.ts'
import type { RpcProxy } from '../support/rpc-proxy.ts'
import type { TestService } from '../support/service.ts'
import { pendingOfAccount, insertTestTracking } from '../support/trackings.ts'
import { engineAtHead, startProxiedEngine, type ProxiedEngine } from './support.ts'

const clock = manualClock(new Date())
let proxied: ProxiedEngine
let anvil: Anvil
let proxy: RpcProxy
let service: TestService

before(async () => {
  proxied = await startProxiedEngine({ clock })
  ;({ anvil, proxy, service } = proxied)
})
after(async () => {
  await proxied?.close()
})

/** The transaction-count requests the proxy forwarded: the block each asked at, and how many calls it held. */
function countRequests(): { block: bigint; calls: number }[] {
  return proxy.requests
    .filter((request) => request.methods.includes('eth_getTransactionCount'))
    .map((request) => {
      const calls = request.body as { params: [string, string] }[]
      return { block: BigInt(calls[0]!.params[1]), calls: calls.length }
    })
}

test('a burst of trackings costs one count request per head, and one more round waits for the next head or the gap', async () => {
  const db = service.database.db
  const account = await createAccount(db, 'rounds')
  await engineAtHead(service, anvil)
  const head = await anvil.publicClient.getBlockNumber()
  const wave = (size: number) =>
    Promise.all(Array.from({ length: size }, () => insertTestTracking(db, account.id, { transaction: null, afterBlock: head })))
  const [first, second, third] = [await wave(200), await wave(200), await wave(1_100)]
  proxy.reset()

  await Promise.all(first.map((tracking) => service.engine.check(tracking)))
  assert.deepEqual(countRequests(), [{ block: head, calls: 200 }], 'the first round goes at once, at the head')

  // Same head, the clock standing still: the round waits for the next block.
  const secondChecked = Promise.all(second.map((tracking) => service.engine.check(tracking)))
  await anvil.testClient.mine({ blocks: 1 })
  await secondChecked
  assert.deepEqual(countRequests()[1], { block: head + 1n, calls: 200 }, 'asked at the new head, not before it')

  // Same head again: the round gap passes on the injected clock instead.
  const thirdChecked = Promise.all(third.map((tracking) => service.engine.check(tracking)))
  clock.advance(1_000)
  await thirdChecked
  assert.deepEqual(
    countRequests().slice(2),
    [
      { block: head + 1n, calls: 1_000 },
      { block: head + 1n, calls: 100 },
    ],
    'a thousand counts per request, the hundred kept by id read again',
  )
  assert.equal(await pendingOfAccount(db, account.id), 1_500, 'every unpaid one was sieved and left pending')
})
