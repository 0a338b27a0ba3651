// The admin use cases (src/admin/) judge time by the clock they are given, for the admin API and the
// CLI alike: a grant's expiry must lie after the injected now, and revocations carry that now. The CLI
// refuses what a rule refuses before it opens the database.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { AdminDeps } from '../../src/admin/admin-deps.ts'
import { createApp, grantApp, listAppGrants } from '../../src/admin/apps.ts'
import { createAccount } from '../../src/admin/accounts.ts'
import { registerAccountDataCommands } from '../../src/cli/account-data-commands.ts'
import { loadConfig, type Config } from '../../src/config/config.ts'
import { openDatabase, type Db } from '../../src/store/infrastructure/database.ts'
import { migrate } from '../../src/store/infrastructure/migrate.ts'
import { manualClock } from '../support/clock.ts'
import { runPrintedCommand } from '../support/commands.ts'
import { useCommandConfig } from '../support/database.ts'

/** Far from the real date either way, so that a rule reading the system clock would answer otherwise. */
const clock = manualClock(new Date('2040-01-01T00:00:00.000Z'))
const commands = useCommandConfig('paywatch-admin-')

/** The database is opened per step: the CLI opens (and, embedded, locks) it itself. */
async function inDatabase<T>(work: (deps: AdminDeps & { db: Db }) => Promise<T>): Promise<T> {
  const handle = await openDatabase({ databaseUrl: commands.config.databaseUrl, dataDir: commands.config.dataDir })
  try {
    await migrate(handle.db)
    return await work({ db: handle.db, clock })
  } finally {
    await handle.close()
  }
}

async function paywatch(...args: string[]): Promise<any> {
  return paywatchWith(commands.config, ...args)
}

async function paywatchWith(config: Config, ...args: string[]): Promise<any> {
  return runPrintedCommand((program) => registerAccountDataCommands(program, () => config, clock), args)
}

async function setUp(): Promise<{ appId: string; merchant: string }> {
  clock.set(new Date('2040-01-01T00:00:00.000Z'))
  return inDatabase(async (deps) => {
    const developer = (await createAccount(deps, 'developer')).account.id
    const merchant = (await createAccount(deps, 'merchant')).account.id
    const app = await createApp(deps, developer, 'Reports')
    assert.equal(app.kind, 'created')
    return { appId: app.kind === 'created' ? app.app.id : '', merchant }
  })
}

test('grantApp: the expiry must lie after the injected clock, not the system time', async () => {
  const { appId, merchant } = await setUp()
  await inDatabase(async (deps) => {
    const grant = (expiresAt: string) => grantApp(deps, appId, { accountId: merchant, scopes: ['payments.read'], expiresAt })
    // In the future of the real date, in the past of the clock.
    assert.deepEqual(await grant('2035-06-01T00:00:00Z'), {
      kind: 'invalid',
      errors: [{ path: 'expires_at', message: 'must lie in the future' }],
    })
    assert.equal((await grant('2040-01-01T00:00:00Z')).kind, 'invalid', "the clock's now itself is not in the future")
    const created = await grant('2040-01-01T00:00:01Z')
    assert.equal(created.kind, 'created')
    clock.set(new Date('2020-01-01T00:00:00.000Z'))
    // In the past of the real date, in the future of the clock.
    assert.equal((await grant('2021-01-01T00:00:00Z')).kind, 'created')
  })
})

test('the CLI applies the same rule with its clock, and revokes as of that clock', async () => {
  const { appId, merchant } = await setUp()
  await assert.rejects(
    paywatch('apps', 'grant', appId, merchant, '--scopes', 'payments.read', '--expires-at', '2035-06-01T00:00:00Z'),
    /--expires-at must be a future ISO 8601 time/,
  )
  const granted = await paywatch('apps', 'grant', appId, merchant, '--scopes', 'payments.read', '--expires-at', '2040-01-01T00:00:01Z')
  assert.equal(granted.expires_at, '2040-01-01T00:00:01.000Z')

  clock.set(new Date('2040-01-01T00:00:00.500Z'))
  assert.deepEqual(await paywatch('apps', 'revoke', granted.id), { id: granted.id, revoked: true })
  const listed = await inDatabase((deps) => listAppGrants(deps, appId))
  assert.equal(listed.kind, 'listed')
  const revoked = listed.kind === 'listed' ? listed.grants.find((g) => g.id === granted.id) : undefined
  assert.equal(revoked?.revokedAt?.toISOString(), '2040-01-01T00:00:00.500Z')
})

test('a grant is read before the app and account are looked up: a bad request for an unknown app is invalid', async () => {
  await inDatabase(async (deps) => {
    const outcome = await grantApp(deps, 'no-such-app', { accountId: '', scopes: [], expiresAt: 'soon' })
    assert.equal(outcome.kind, 'invalid')
    assert.deepEqual(outcome.kind === 'invalid' ? outcome.errors.map((e) => e.path) : [], ['account_id', 'scopes', 'expires_at'])
    assert.deepEqual(
      await grantApp(deps, 'no-such-app', { accountId: 'no-such-account', scopes: ['payments.read'], expiresAt: undefined }),
      { kind: 'not-found', what: 'app' },
    )
  })
})

test('the CLI refuses an argument a rule refuses before it opens the database', async () => {
  clock.set(new Date('2040-01-01T00:00:00.000Z'))
  // Nothing listens on port 1: a command that opened the database would fail with a connection error.
  const unreachable = loadConfig({ PAYWATCH_DATA_DIR: commands.config.dataDir, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' })
  await assert.rejects(paywatchWith(unreachable, 'shops', 'connect', 'acct', 'https://x.example.com'), /^Error: shop must be a host name/)
  await assert.rejects(paywatchWith(unreachable, 'apps', 'create', 'acct', ' '), /^Error: name must be 1 to 200 characters$/)
  await assert.rejects(
    paywatchWith(unreachable, 'apps', 'grant', 'app', 'acct', '--scopes', 'payments.write'),
    /^Error: --scopes .*unknown scope/,
  )
  await assert.rejects(
    paywatchWith(unreachable, 'apps', 'grant', 'app', 'acct', '--scopes', 'payments.read', '--expires-at', '2035-06-01T00:00:00Z'),
    /^Error: --expires-at must be a future ISO 8601 time$/,
  )
})
