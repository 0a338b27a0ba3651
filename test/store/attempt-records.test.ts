// A batch of answered attempts (recordAttempts): without a forward_to in its answers it is one statement, with
// the endpoints' health beside it; only deliveries this worker still holds change, and only their users are released.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { KyselyPlugin } from 'kysely'
import { createAccount } from '../../src/store/accounts.ts'
import { recordAttempts } from '../../src/store/attempt-records.ts'
import { claimDueDeliveries } from '../../src/store/deliveries.ts'
import { successfulEndpointsUpsert } from '../../src/store/endpoint-health.ts'
import { deliveredOutcome, insertCompleted } from '../callbacks/support.ts'
import { useTestDatabase } from '../support/database.ts'

const database = useTestDatabase()

test('a batch without forward_to is one statement: the deliveries this worker holds are delivered and their users released, with the endpoint health; a delivery taken over is only logged', async () => {
  const db = database.db
  const account = await createAccount(db, 'attempts')
  const now = new Date('2026-11-26T12:00:00.000Z')
  const url = 'https://merchant.example'
  const [kept, lost] = await Promise.all([
    insertCompleted(db, account.id, { callback: `${url}/kept` }, undefined, now),
    insertCompleted(db, account.id, { callback: `${url}/lost` }, undefined, now),
  ])
  const leaseUntil = new Date(now.getTime() + 40_000)
  const claimed = await claimDueDeliveries(db, { now, leaseUntil, limit: 10, claim: 'worker-a:1' })
  const keptDelivery = claimed.find((d) => d.trackingId === kept.id)!
  const lostDelivery = claimed.find((d) => d.trackingId === lost.id)!
  // worker-a's lease on the second one ran out and worker-b took it over.
  await db.updateTable('deliveries').set({ locked_until: now, next_attempt_at: now }).where('id', '=', lostDelivery.id).execute()
  const [takenOver] = await claimDueDeliveries(db, { now, leaseUntil, limit: 10, claim: 'worker-b:1' })
  assert.equal(takenOver?.id, lostDelivery.id)

  let statements = 0
  const counting: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      statements++
      return args.result
    },
  }
  const at = new Date(now.getTime() + 1_000)
  const health = successfulEndpointsUpsert([{ accountId: account.id, url, succeeded: true, gone: false }], at)
  const released = await recordAttempts(
    db.withPlugin(counting),
    [deliveredOutcome(keptDelivery, at), deliveredOutcome(lostDelivery, at)],
    at,
    health,
  )
  assert.equal(statements, 1)
  assert.deepEqual(
    released.map((t) => [t.id, t.release, t.releasedAt?.toISOString()]),
    [[kept.id, true, at.toISOString()]],
  )
  const rows = await db
    .selectFrom('deliveries')
    .select(['id', 'state', 'claimed_by', 'attempts'])
    .where('id', 'in', [keptDelivery.id, lostDelivery.id])
    .execute()
  const byId = new Map(rows.map((row) => [row.id, row]))
  assert.deepEqual(byId.get(keptDelivery.id), { id: keptDelivery.id, state: 'delivered', claimed_by: null, attempts: 1 })
  assert.equal(byId.get(lostDelivery.id)?.state, 'due', 'worker-b holds it now')
  assert.equal(byId.get(lostDelivery.id)?.claimed_by, 'worker-b:1')
  const trackings = await db.selectFrom('trackings').select(['id', 'release']).where('id', 'in', [kept.id, lost.id]).execute()
  assert.deepEqual(
    new Map(trackings.map((t) => [t.id, t.release])),
    new Map([
      [kept.id, true],
      [lost.id, false],
    ]),
  )
  const logged = await db
    .selectFrom('delivery_attempts')
    .select('delivery_id')
    .where('delivery_id', 'in', [keptDelivery.id, lostDelivery.id])
    .execute()
  assert.equal(logged.length, 2, 'both answers are in the log')
  const endpoint = await db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', account.id).executeTakeFirstOrThrow()
  assert.equal(new Date(endpoint.last_success_at!).toISOString(), at.toISOString())
  assert.equal(endpoint.failing_since, null)
})
