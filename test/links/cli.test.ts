import assert from 'node:assert/strict'
import { test } from 'node:test'
import { registerAccountDataCommands } from '../../src/cli/account-data-commands.ts'
import { createAccount } from '../../src/store/accounts.ts'
import { authenticateAccessToken } from '../../src/store/app-grants.ts'
import { openDatabase } from '../../src/store/infrastructure/database.ts'
import { listLinks } from '../../src/store/links.ts'
import { migrate } from '../../src/store/infrastructure/migrate.ts'
import { runPrintedCommand } from '../support/commands.ts'
import { useCommandConfig } from '../support/database.ts'

const commands = useCommandConfig('paywatch-cli-')

/** Runs `paywatch <args>` in process; answers what it printed, parsed. */
async function paywatch(...args: string[]): Promise<any> {
  return runPrintedCommand((program) => registerAccountDataCommands(program, () => commands.config), args)
}

async function inDatabase<T>(work: (db: Awaited<ReturnType<typeof openDatabase>>['db']) => Promise<T>): Promise<T> {
  const handle = await openDatabase({ databaseUrl: commands.config.databaseUrl, dataDir: commands.config.dataDir })
  try {
    await migrate(handle.db)
    return await work(handle.db)
  } finally {
    await handle.close()
  }
}

test('paywatch links, shops and apps do what the admin API does', async () => {
  const { merchant, developer } = await inDatabase(async (db) => ({
    merchant: (await createAccount(db, 'merchant')).id,
    developer: (await createAccount(db, 'developer')).id,
  }))
  const link = await paywatch('links', 'create', merchant, '--name', 'tips')
  assert.equal(link.account_id, merchant)
  assert.equal(link.name, 'tips')

  const shop = await paywatch('shops', 'connect', merchant, 'Shop.Example.com')
  assert.deepEqual(shop, { shop: 'shop.example.com', created: true })

  const app = await paywatch('apps', 'create', developer, 'Reports')
  assert.equal(app.account_id, developer)
  const grant = await paywatch('apps', 'grant', app.id, merchant, '--scopes', 'payments.read,checkouts.shopify.read')
  assert.deepEqual(grant.scopes, ['payments.read', 'checkouts.shopify.read'])
  assert.match(grant.access_token, /^pwt_/)

  await assert.rejects(paywatch('apps', 'grant', app.id, merchant, '--scopes', 'payments.write'), /unknown scope/)
  await assert.rejects(paywatch('shops', 'connect', merchant, 'https://x.example.com'), /host name/)
  assert.deepEqual(
    (await paywatch('links', 'list', merchant)).map((l: { id: string }) => l.id),
    [link.id],
  )
  assert.deepEqual(
    (await paywatch('shops', 'list', merchant)).map((s: { shop: string }) => s.shop),
    ['shop.example.com'],
  )
  assert.deepEqual(
    (await paywatch('apps', 'list', developer)).map((a: { id: string }) => a.id),
    [app.id],
  )
  // An unknown account is an error, as the admin API's 404, not an empty list.
  for (const command of ['links', 'shops', 'apps']) {
    await assert.rejects(paywatch(command, 'list', 'no-such-account'), /account no-such-account not found/)
  }

  const revoked = await paywatch('apps', 'revoke', grant.id)
  assert.deepEqual(revoked, { id: grant.id, revoked: true })
  await inDatabase(async (db) => {
    assert.equal(await authenticateAccessToken(db, grant.access_token, new Date()), undefined, 'revoked token no longer works')
    assert.deepEqual(
      (await listLinks(db, merchant)).map((l) => l.id),
      [link.id],
    )
  })
})
