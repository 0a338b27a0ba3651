import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, test } from 'node:test'
import { startTestService, type TestService } from '../support/service.ts'
import { insertCompleted, startReceiver, type Receiver } from '../callbacks/support.ts'
import { standardVerifies } from './support.ts'

let service: TestService
let receiver: Receiver

before(async () => {
  receiver = await startReceiver(() => ({ status: 200 }))
  service = await startTestService({ background: false, env: { PAYWATCH_SECRETS_KEY: randomBytes(32).toString('hex') } })
})
after(async () => {
  await service?.close()
  await receiver?.close()
})

test('with PAYWATCH_SECRETS_KEY the webhook secrets are stored sealed, and still sign', async () => {
  const { accountId } = await service.newAccount()
  const first = (await service.admin({ method: 'POST', url: `/admin/accounts/${accountId}/webhook-secret` })).json().webhook_secret
  const second = (await service.admin({ method: 'POST', url: `/admin/accounts/${accountId}/webhook-secret` })).json().webhook_secret
  const integration = (await service.admin({ method: 'POST', url: `/admin/accounts/${accountId}/integrations`, payload: {} })).json()
  const rows = await service.database.db.selectFrom('webhook_secrets').selectAll().where('account_id', '=', accountId).execute()
  assert.equal(rows.length, 2)
  for (const row of rows) {
    assert.match(row.secret, /^pwenc:v1:/)
    for (const secret of [first, second, integration.webhook_secret]) assert.ok(!JSON.stringify(row).includes(secret.slice(6)))
  }
  assert.match(rows.find((row) => row.owner.startsWith('account:'))!.previous_secret!, /^pwenc:v1:/)

  await insertCompleted(service.database.db, accountId, { callback: `${receiver.url}/a` })
  await insertCompleted(service.database.db, accountId, { callback: `${receiver.url}/b`, integrationId: integration.id })
  await service.callbacks.worker.runOnce()
  const got = await receiver.waitFor(2)
  const byPath = new Map(got.map((r) => [r.path, r]))
  assert.ok(standardVerifies(byPath.get('/a')!, second) && standardVerifies(byPath.get('/a')!, first))
  assert.ok(standardVerifies(byPath.get('/b')!, integration.webhook_secret))
})
