// PAYWATCH_TRACKING_TIMEOUT: a tracking still pending that long after the database registered it
// fails with TRACKING_TIMED_OUT; a younger one stays pending; final states never change. Time-outs
// are measured on the database's clock (clock-step.test.ts): the test moves a tracking's registration
// back instead of the clock forward; the injected clock stamps the change.
import assert from 'node:assert/strict'
import { sql } from 'kysely'
import { after, before, test } from 'node:test'
import { parseEther } from 'viem'
import type { Tracking } from '../../src/domain/tracking.ts'
import { sendNative, startAnvil, type Anvil } from '../support/index.ts'
import { manualClock } from '../support/clock.ts'
import type { TestService } from '../support/service.ts'
import { createPayment, freshAddress, readPayment, startEngineService, waitForFinal } from './support.ts'

let anvil: Anvil
let service: TestService
let apiKey: string
const clock = manualClock(new Date())
const completed: Tracking[] = []

before(async () => {
  anvil = await startAnvil()
  service = await startEngineService(anvil, { clock, env: { PAYWATCH_TRACKING_TIMEOUT: '600' } })
  service.events.on('completed', (tracking) => completed.push(tracking))
  ;({ apiKey } = await service.newAccount())
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

test('pending past the time-out: failed TRACKING_TIMED_OUT; younger and final ones untouched', async () => {
  const old = await createPayment(service, apiKey, anvil, anvil.accounts[1]!, { receiver: freshAddress(), amount: '1' })
  const receiver = freshAddress()
  const succeeded = await createPayment(service, apiKey, anvil, anvil.accounts[2]!, { receiver, amount: '1' })
  await sendNative(anvil, anvil.accounts[2]!, receiver, parseEther('1'))
  assert.equal((await waitForFinal(service, apiKey, succeeded.request.secret_id)).status, 'success')

  const db = service.database.db
  const age = (secretId: string, seconds: number) =>
    sql`UPDATE trackings SET registered_at = now() - make_interval(secs => ${seconds}) WHERE secret_id = ${secretId}`.execute(db)
  await age(old.request.secret_id, 400)
  clock.advance(400_000)
  const young = await createPayment(service, apiKey, anvil, anvil.accounts[3]!, { receiver: freshAddress(), amount: '1' })
  assert.equal(await service.engine.sweep(), 0, 'nothing is 600 s old yet')

  await age(old.request.secret_id, 600.001)
  clock.advance(200_001)
  assert.equal(await service.engine.sweep(), 1)
  const timedOut = await readPayment(service, apiKey, old.request.secret_id)
  assert.equal(timedOut.status, 'failed')
  assert.equal(timedOut.failed_reason, 'TRACKING_TIMED_OUT')
  assert.equal(timedOut.updated_at, clock().toISOString())
  assert.ok(completed.some((t) => t.secretId === old.request.secret_id && t.failedReason === 'TRACKING_TIMED_OUT'))
  assert.equal((await readPayment(service, apiKey, young.request.secret_id)).status, 'pending')
  assert.equal((await readPayment(service, apiKey, succeeded.request.secret_id)).status, 'success')

  const deliveries = await db
    .selectFrom('deliveries')
    .innerJoin('trackings', 'trackings.id', 'deliveries.tracking_id')
    .select('trackings.secret_id')
    .where('trackings.secret_id', '=', old.request.secret_id)
    .execute()
  assert.equal(deliveries.length, 1, 'the callback delivery row was written with the status change')

  await age(young.request.secret_id, 601)
  assert.equal(await service.engine.sweep(), 1, 'the younger one, now')
  assert.equal(await service.engine.sweep(), 0)
})
