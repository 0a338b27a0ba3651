import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { Command } from 'commander'
import { registerCallbackCommands } from '../../src/cli/callback-commands.ts'
import { loadConfig } from '../../src/config/config.ts'
import { createAccount } from '../../src/store/accounts.ts'
import { openDatabase } from '../../src/store/infrastructure/database.ts'
import { migrate } from '../../src/store/infrastructure/migrate.ts'
import { createFreshDatabaseUrl, dropDatabase } from '../support/database.ts'
import { startAnvil, type Anvil } from '../support/index.ts'
import { seedEmbeddedDataDir } from '../support/pglite-template.ts'
import { startTestService, type TestService } from '../support/service.ts'
import { insertCompleted, insertPending, verifiedBy } from './support.ts'

let anvil: Anvil
let service: TestService
before(async () => {
  anvil = await startAnvil()
  service = await startTestService({
    chains: { ethereum: { rpc: [anvil.rpcUrl], chainId: anvil.chainId } },
    env: { PAYWATCH_RATE_RPS: '100000', PAYWATCH_RATE_PARALLEL: '1000' },
    background: false,
  })
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

const createIntegration = async (accountId: string, payload: unknown = { name: 'web shop' }) => {
  const res = await service.admin({ method: 'POST', url: `/admin/accounts/${accountId}/integrations`, payload: payload as object })
  assert.equal(res.statusCode, 201, res.body)
  return res.json<{ id: string; account_id: string; name: string | null; public_key: string }>()
}

test('admin API: create an integration ({id, public_key}), list and show it; unknown account 404; admin token needed', async () => {
  const { accountId } = await service.newAccount()
  const integration = await createIntegration(accountId)
  assert.match(integration.id, /^[0-9a-f-]{36}$/)
  assert.match(integration.public_key, /^-----BEGIN PUBLIC KEY-----\n/)
  assert.equal(integration.name, 'web shop')
  assert.equal((await createIntegration(accountId, {})).name, null)

  const list = await service.admin({ method: 'GET', url: `/admin/accounts/${accountId}/integrations` })
  assert.equal(list.json().length, 2)
  assert.equal(list.json()[0].public_key, integration.public_key)
  const shown = await service.admin({ method: 'GET', url: `/admin/integrations/${integration.id}` })
  assert.equal(shown.json().public_key, integration.public_key)
  assert.equal(JSON.stringify(shown.json()).includes('PRIVATE'), false, 'the private key never leaves the service')

  assert.equal((await service.admin({ method: 'GET', url: '/admin/integrations/nope' })).statusCode, 404)
  assert.equal((await service.admin({ method: 'POST', url: '/admin/accounts/nope/integrations', payload: {} })).statusCode, 404)
  assert.equal(
    (await service.admin({ method: 'POST', url: `/admin/accounts/${accountId}/integrations`, payload: { name: 5 } })).statusCode,
    400,
  )
  const anonymous = await service.app.inject({ method: 'POST', url: `/admin/accounts/${accountId}/integrations`, payload: {} })
  assert.equal(anonymous.statusCode, 401)
})

const paymentBody = (nonce: number, extra: Record<string, unknown>) => ({
  blockchain: 'ethereum',
  sender: anvil.accounts[1]!.address,
  nonce,
  receiver: anvil.accounts[2]!.address,
  token: '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE',
  amount: '1',
  after_block: 0,
  secret_id: `integration-${nonce}`,
  callback: 'https://shop.example/cb',
  ...extra,
})

test('POST /v2/payments: an unknown or foreign integration is a 400; its own integration signs the record', async () => {
  const mine = await service.newAccount('mine')
  const theirs = await service.newAccount('theirs')
  const own = await createIntegration(mine.accountId)
  const foreign = await createIntegration(theirs.accountId)
  const create = (nonce: number, extra: Record<string, unknown>) =>
    service.api(mine.apiKey, { method: 'POST', url: '/v2/payments', payload: paymentBody(nonce, extra) })

  for (const [nonce, extra, path] of [
    [1, { integration_id: 'does-not-exist' }, 'integration_id'],
    [2, { integration_id: foreign.id }, 'integration_id'],
    [3, { payload: { integration: foreign.id } }, 'payload.integration'],
    [7, { integration_id: own.id, payload: { integration: foreign.id } }, 'payload.integration'],
    [8, { payload: { integration: 5 } }, 'payload.integration'],
    [9, { payload: { integration: '' } }, 'payload.integration'],
  ] as const) {
    const res = await create(nonce, extra)
    assert.equal(res.statusCode, 400, res.body)
    assert.equal(res.json().code, 'VALIDATION_FAILED')
    assert.equal(res.json().errors[0].path, path)
  }

  const publicKey = (await service.app.inject({ method: 'GET', url: '/v2/public-key' })).body
  for (const [nonce, extra] of [
    [4, { integration_id: own.id }],
    [5, { payload: { integration: own.id, note: 'ñ' } }],
    [10, { integration_id: own.id, payload: { integration: own.id } }],
  ] as const) {
    const res = await create(nonce, extra)
    assert.equal(res.statusCode, 201, res.body)
    const read = await service.api(mine.apiKey, { method: 'GET', url: `/v2/payments/integration-${nonce}` })
    assert.equal(await verifiedBy({ body: read.body, headers: read.headers }, own.public_key), true)
    assert.equal(await verifiedBy({ body: read.body, headers: read.headers }, publicKey), false)
  }
  assert.equal((await create(6, {})).statusCode, 201)
  const plain = await service.api(mine.apiKey, { method: 'GET', url: '/v2/payments/integration-6' })
  assert.equal(await verifiedBy({ body: plain.body, headers: plain.headers }, publicKey), true)
})

test('CLI: integrations create/show and deliveries list/redeliver', async () => {
  const databaseUrl = await createFreshDatabaseUrl()
  const dataDir = mkdtempSync(join(tmpdir(), 'paywatch-cli-'))
  if (!databaseUrl) await seedEmbeddedDataDir(dataDir)
  const env = { PAYWATCH_DATA_DIR: dataDir, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }
  const config = loadConfig(env)
  const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir })
  await migrate(handle.db)
  const account = await createAccount(handle.db, 'cli')
  const done = await insertCompleted(handle.db, account.id, { callback: 'https://shop.example/cb' })
  const waiting = await insertPending(handle.db, account.id, { callback: 'https://shop.example/cb' })
  // The embedded database is one process's: the CLI opens it itself.
  await handle.close()

  const run = async (...args: string[]): Promise<string> => {
    const program = new Command('paywatch').exitOverride()
    registerCallbackCommands(program, () => config)
    const lines: string[] = []
    const log = console.log
    const write = process.stdout.write
    console.log = (line: string) => void lines.push(line)
    process.stdout.write = ((chunk: string) => (lines.push(chunk), true)) as typeof process.stdout.write
    try {
      await program.parseAsync(['node', 'paywatch', ...args])
    } finally {
      console.log = log
      process.stdout.write = write
    }
    return lines.join('\n')
  }

  try {
    const created = JSON.parse(await run('integrations', 'create', account.id, '--name', 'pos'))
    assert.equal(created.name, 'pos')
    assert.match(created.public_key, /BEGIN PUBLIC KEY/)
    assert.equal(await run('integrations', 'show', created.id, '--pem'), created.public_key)
    assert.deepEqual(
      JSON.parse(await run('integrations', 'list', account.id)).map((i: { id: string }) => i.id),
      [created.id],
    )
    await assert.rejects(run('integrations', 'list', 'not-an-account'), /account not-an-account not found/)

    const before = JSON.parse(await run('deliveries', 'list', done.secretId, '--account', account.id))
    assert.equal(before.length, 1)
    assert.equal(before[0].state, 'due')
    await assert.rejects(run('deliveries', 'redeliver', waiting.secretId, '--account', account.id), /still pending/)
    const moved = JSON.parse(await run('deliveries', 'redeliver', done.secretId, '--account', account.id))
    assert.equal(moved.id, before[0].id, 'the delivery still waiting is brought forward, not doubled')
  } finally {
    if (databaseUrl) await dropDatabase(databaseUrl)
    rmSync(dataDir, { recursive: true, force: true })
  }
})
