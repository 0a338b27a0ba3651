import assert from 'node:assert/strict'
import { test } from 'node:test'
import { registerCallbackCommands } from '../../src/cli/callback-commands.ts'
import { registerEndpointCommands } from '../../src/cli/endpoint-commands.ts'
import { createAccount } from '../../src/store/accounts.ts'
import { openDatabase, type Db } from '../../src/store/infrastructure/database.ts'
import { recordEndpointHealth } from '../../src/store/endpoint-health.ts'
import { migrate } from '../../src/store/infrastructure/migrate.ts'
import { runPrintedCommand } from '../support/commands.ts'
import { useCommandConfig } from '../support/database.ts'
import { insertCompleted, startReceiver } from '../callbacks/support.ts'
import { standardVerifies } from './support.ts'

const commands = useCommandConfig('paywatch-webhooks-cli-')

/** Runs `paywatch <args>` in process (test events may go to 127.0.0.1); answers what it printed, parsed. */
function paywatch(...args: string[]): Promise<any> {
  const config = () => ({ ...commands.config, allowPrivateCallbacks: true })
  return runPrintedCommand((program) => {
    registerCallbackCommands(program, config)
    registerEndpointCommands(program, config)
  }, args)
}

async function inDatabase<T>(work: (db: Db) => Promise<T>): Promise<T> {
  const handle = await openDatabase({ databaseUrl: commands.config.databaseUrl, dataDir: commands.config.dataDir })
  try {
    await migrate(handle.db)
    return await work(handle.db)
  } finally {
    await handle.close()
  }
}

test('paywatch webhook-secret, integrations create --reversal-events and endpoints list|enable|recover|test', async () => {
  const receiver = await startReceiver(() => ({ status: 200 }))
  try {
    const accountId = await inDatabase(async (db) => {
      const account = await createAccount(db, 'merchant')
      await insertCompleted(db, account.id, { callback: `${receiver.url}/hook` })
      // The endpoint answered 410 once: disabled, its delivery paused.
      await recordEndpointHealth(db, [{ accountId: account.id, url: receiver.url, succeeded: false, gone: true }], new Date(), 1000)
      return account.id
    })
    const { webhook_secret: secret } = await paywatch('webhook-secret', accountId)
    assert.match(secret, /^whsec_/)
    const integration = await paywatch('integrations', 'create', accountId, '--reversal-events')
    assert.equal(integration.reversal_events, true)
    assert.match(integration.webhook_secret, /^whsec_/)

    const [listed] = await paywatch('endpoints', 'list', accountId)
    assert.equal(listed.state, 'disabled')
    assert.equal(listed.pending_deliveries, 1)
    const all = await paywatch('endpoints', 'list')
    assert.equal(all[0].account_id, accountId)
    const enabled = await paywatch('endpoints', 'enable', accountId, receiver.url)
    assert.equal(enabled.state, 'active')
    assert.deepEqual(await paywatch('endpoints', 'recover', accountId, receiver.url, '--since', '2020-01-01T00:00:00Z'), { redelivered: 0 })

    const sent = await paywatch('endpoints', 'test', accountId, `${receiver.url}/hook`)
    assert.equal(sent.status, 200)
    const [got] = await receiver.waitFor(1)
    assert.equal(got!.headers['x-paywatch-event'], 'test')
    assert.ok(standardVerifies(got!, secret))
    await assert.rejects(paywatch('endpoints', 'enable', accountId, 'https://elsewhere.example'), /no endpoint/)
  } finally {
    await receiver.close()
  }
})
