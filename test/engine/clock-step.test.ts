// Time-outs on the database's clock: a node whose clock steps ahead (an NTP step, a VM resumed from a
// snapshot) does not fail paid payments that are still confirming, nor young ones; a tracking
// registered longer ago than PAYWATCH_TRACKING_TIMEOUT on the database's clock still times out.
import assert from 'node:assert/strict'
import { sql } from 'kysely'
import { after, before, test } from 'node:test'
import { parseEther } from 'viem'
import { startAnvil, type Anvil } from '../support/index.ts'
import { manualClock } from '../support/clock.ts'
import type { TestService } from '../support/service.ts'
import { createPayment, freshAddress, readPayment, startEngineService, waitFor } from './support.ts'

let anvil: Anvil
let service: TestService
let apiKey: string
const clock = manualClock(new Date())

before(async () => {
  anvil = await startAnvil()
  service = await startEngineService(anvil, { clock, env: { PAYWATCH_TRACKING_TIMEOUT: '300' } })
  ;({ apiKey } = await service.newAccount())
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

test("the node's clock steps +600 s: 20 paid payments still confirming and a young one stay pending", async () => {
  const payer = anvil.accounts[1]!
  const receiver = freshAddress()
  const first = await anvil.publicClient.getTransactionCount({ address: payer.address })
  const secrets: string[] = []
  for (let k = 0; k < 20; k++) {
    const { request } = await createPayment(service, apiKey, anvil, payer, {
      receiver,
      amount: '0.01',
      nonce: first + k,
      confirmations: 100,
    })
    secrets.push(request.secret_id)
  }
  for (let k = 0; k < 20; k++) await payer.wallet.sendTransaction({ to: receiver, value: parseEther('0.01'), nonce: first + k })
  const db = service.database.db
  // Every payment is mined and matched, waiting for its 100 confirmations.
  await waitFor('the payments to be matched', async () => {
    const row = await db.selectFrom('tracking_matches').select(db.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()
    return Number(row.n) >= 20 ? true : undefined
  })
  const young = await createPayment(service, apiKey, anvil, anvil.accounts[2]!, { receiver: freshAddress(), amount: '1' })

  clock.advance(600_000)
  assert.equal(await service.engine.sweep(), 0, 'nothing timed out on a clock that stepped')
  for (const secret of [...secrets, young.request.secret_id]) assert.equal((await readPayment(service, apiKey, secret)).status, 'pending')

  // Registered 301 s ago on the database's clock: the young (unmatched) one times out, the confirming ones do not.
  await sql`UPDATE trackings SET registered_at = now() - interval '301 seconds'`.execute(db)
  assert.equal(await service.engine.sweep(), 1)
  const timedOut = await readPayment(service, apiKey, young.request.secret_id)
  assert.deepEqual([timedOut.status, timedOut.failed_reason], ['failed', 'TRACKING_TIMED_OUT'])
  for (const secret of secrets) assert.equal((await readPayment(service, apiKey, secret)).status, 'pending')

  // Found longer ago than the time-out too (stuck, e.g. no quorum ever): timed out after all.
  await sql`UPDATE tracking_matches SET matched_at = now() - interval '301 seconds'`.execute(db)
  assert.equal(await service.engine.sweep(), 20)
})
