// A burst of creates outruns the fast path's checks (a few RPC calls each): the checks wait in line,
// and past the first thousand a waiting tracking is kept by its id and read again when its turn comes
// (src/engine/fast-path-checks.ts). One paid before it was created, at the end of such a line, is
// still found by its check.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { parseEther } from 'viem'
import { createChainEngine, type ChainEngine } from '../../src/engine/chain-engine.ts'
import { createAccount } from '../../src/store/accounts.ts'
import { sendNative, startAnvil, type Anvil } from '../support/index.ts'
import type { TestService } from '../support/service.ts'
import { pendingOfAccount, insertTestTracking } from '../support/trackings.ts'
import { freshAddress, startEngineService } from './support.ts'

let anvil: Anvil
let service: TestService
let engine: ChainEngine

before(async () => {
  anvil = await startAnvil()
  service = await startEngineService(anvil, { background: false })
  // One check at a time, so that every other one waits in line.
  engine = createChainEngine(
    service.common,
    { database: service.database, chains: service.chains, events: service.events, fallbackReadiness: async () => [] },
    { fastPathConcurrency: 1 },
  )
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

test('a check that waited in line by its id still finds a payment mined before its tracking', async () => {
  const db = service.database.db
  const account = await createAccount(db, 'line')
  const alice = anvil.accounts[1]!
  const receiver = freshAddress()
  const afterBlock = await anvil.publicClient.getBlockNumber()
  const nonce = await anvil.publicClient.getTransactionCount({ address: alice.address })
  const paid = await sendNative(anvil, alice, receiver, parseEther('0.25'))
  const fillers = await Promise.all(
    Array.from({ length: 1_100 }, () => insertTestTracking(db, account.id, { transaction: null, afterBlock })),
  )
  const tracking = await insertTestTracking(db, account.id, {
    sender: alice.address.toLowerCase(),
    nonce: BigInt(nonce),
    receiver: receiver.toLowerCase(),
    amount: '0.25',
    confirmations: 1,
    afterBlock,
    transaction: paid.transactionHash.toLowerCase(),
  })
  for (const filler of fillers) void engine.check(filler)
  await engine.check(tracking)
  const row = await db.selectFrom('trackings').select(['status', 'transaction']).where('id', '=', tracking.id).executeTakeFirstOrThrow()
  assert.deepEqual(row, { status: 'success', transaction: paid.transactionHash.toLowerCase() })
  assert.equal(await pendingOfAccount(db, account.id), 1_100, 'the unpaid ones were checked and left pending')
})
