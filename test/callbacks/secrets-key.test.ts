// PAYWATCH_SECRETS_KEY: the service and integration signing keys are stored sealed, still sign what
// DePay's verifier accepts, survive restarts with the same key, and a missing or wrong key stops the start.
import assert from 'node:assert/strict'
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import pino from 'pino'
import { Command } from 'commander'
import { registerCallbackCommands } from '../../src/cli/callback-commands.ts'
import { loadConfig, type Config } from '../../src/config/config.ts'
import { createService, type Service } from '../../src/service.ts'
import { createFreshDatabaseUrl, dropDatabase } from '../support/database.ts'
import { seedEmbeddedDataDir } from '../support/pglite-template.ts'
import { ADMIN_TOKEN } from '../support/service.ts'
import { insertPending, verifiedBy } from './support.ts'

const hexKey = randomBytes(32).toString('hex')
const cleanups: (() => Promise<void>)[] = []
after(async () => {
  for (const cleanup of cleanups) await cleanup()
})

/** One installation (database kept across restarts); each start is a real service with its own log. */
async function installation() {
  const dataDir = mkdtempSync(join(tmpdir(), 'paywatch-secrets-'))
  const databaseUrl = await createFreshDatabaseUrl()
  if (!databaseUrl) await seedEmbeddedDataDir(dataDir)
  cleanups.push(async () => {
    if (databaseUrl) await dropDatabase(databaseUrl)
    rmSync(dataDir, { recursive: true, force: true })
  })
  const configOf = (env: Record<string, string>) =>
    loadConfig({
      PAYWATCH_DATA_DIR: dataDir,
      PAYWATCH_ADMIN_TOKEN: ADMIN_TOKEN,
      PAYWATCH_AUTH_FAILURES: '1000000',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      ...env,
    })
  return Object.assign(
    async (env: Record<string, string>): Promise<{ service: Service; logs: string[] }> => {
      const logs: string[] = []
      const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(line) })
      const service = await createService(configOf(env), { logger, background: false })
      return { service, logs }
    },
    { configOf },
  )
}

/** `paywatch <args>` in this process (the embedded database is one process's: no service may be running). */
async function cli(config: Config, ...args: string[]): Promise<string> {
  const program = new Command('paywatch').exitOverride()
  registerCallbackCommands(program, () => config)
  const lines: string[] = []
  const log = console.log
  console.log = (line: string) => void lines.push(line)
  try {
    await program.parseAsync(['node', 'paywatch', ...args])
  } finally {
    console.log = log
  }
  return lines.join('\n')
}

const admin = (service: Service, method: 'GET' | 'POST', url: string, payload?: object) =>
  service.app.inject({ method, url, payload, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })

const publicKeyOf = async (service: Service) => (await service.app.inject({ method: 'GET', url: '/v2/public-key' })).body

async function newIntegration(service: Service) {
  const account = (await admin(service, 'POST', '/admin/accounts', { name: 'shop' })).json<{ id: string }>()
  const apiKey = (await admin(service, 'POST', `/admin/accounts/${account.id}/api-keys`)).json<{ key: string }>().key
  const created = await admin(service, 'POST', `/admin/accounts/${account.id}/integrations`, { name: 'web shop' })
  assert.equal(created.statusCode, 201, created.body)
  return { accountId: account.id, apiKey, integration: created.json<{ id: string; public_key: string }>() }
}

const storedKeys = async (service: Service) =>
  [
    ...(await service.database.db.selectFrom('service_keys').select('private_key_pem').execute()),
    ...(await service.database.db.selectFrom('integrations').select('private_key_pem').execute()),
  ].map((row) => row.private_key_pem)

/** A record signed with the integration's key and one with the service key, as DePay's verifier checks them. */
async function assertRecordsVerify(service: Service, shop: Awaited<ReturnType<typeof newIntegration>>, servicePublicKey: string) {
  for (const [integrationId, publicKey] of [
    [shop.integration.id, shop.integration.public_key],
    [null, servicePublicKey],
  ] as const) {
    const tracking = await insertPending(service.database.db, shop.accountId, { integrationId })
    const read = await service.app.inject({
      method: 'GET',
      url: `/v2/payments/${tracking.secretId}`,
      headers: { 'x-api-key': shop.apiKey },
    })
    assert.equal(read.statusCode, 200, read.body)
    assert.equal(
      await verifiedBy({ body: read.body, headers: read.headers }, publicKey),
      true,
      `signed with ${integrationId ?? 'the service key'}`,
    )
  }
}

/** The start fails with one line naming PAYWATCH_SECRETS_KEY (what `paywatch serve` prints), not with a new key. */
async function assertStartRefused(start: Awaited<ReturnType<typeof installation>>, env: Record<string, string>, message: RegExp) {
  await assert.rejects(start(env), (error: Error) => {
    assert.match(error.message, message)
    assert.equal(error.message.includes('\n'), false, 'one line')
    return true
  })
}

test('with the key set, stored private keys are sealed, sign verifiable records, and a restart needs the same key', async () => {
  const start = await installation()
  const first = await start({ PAYWATCH_SECRETS_KEY: hexKey })
  const servicePublicKey = await publicKeyOf(first.service)
  const shop = await newIntegration(first.service)
  const stored = await storedKeys(first.service)
  assert.equal(stored.length, 2)
  for (const value of stored) {
    assert.match(value, /^pwenc:v1:/)
    assert.equal(value.includes('PRIVATE KEY'), false)
  }
  await assertRecordsVerify(first.service, shop, servicePublicKey)
  await first.service.close()

  // The same key as base64: the same 32 bytes.
  const again = await start({ PAYWATCH_SECRETS_KEY: Buffer.from(hexKey, 'hex').toString('base64') })
  assert.equal(await publicKeyOf(again.service), servicePublicKey, 'the same service key, not a new one')
  await assertRecordsVerify(again.service, shop, servicePublicKey)
  assert.deepEqual(await storedKeys(again.service), stored, 'sealed rows are left as they are')
  await again.service.close()

  await assertStartRefused(
    start,
    { PAYWATCH_SECRETS_KEY: randomBytes(32).toString('hex') },
    /^PAYWATCH_SECRETS_KEY does not open the stored signing keys/,
  )
  await assertStartRefused(start, {}, /^PAYWATCH_SECRETS_KEY is missing/)

  const after = await start({ PAYWATCH_SECRETS_KEY: hexKey })
  assert.equal(await publicKeyOf(after.service), servicePublicKey, 'the refused starts generated no key')
  assert.deepEqual(await storedKeys(after.service), stored)
  await after.service.close()
})

test('plaintext keys from before the key was set are sealed at start, once, without logging them', async () => {
  const start = await installation()
  const plain = await start({})
  const servicePublicKey = await publicKeyOf(plain.service)
  const shop = await newIntegration(plain.service)
  assert.deepEqual(
    (await storedKeys(plain.service)).map((value) => value.startsWith('-----BEGIN PRIVATE KEY-----')),
    [true, true],
    'plaintext without the key',
  )
  await assertRecordsVerify(plain.service, shop, servicePublicKey)
  await plain.service.close()

  const sealing = await start({ PAYWATCH_SECRETS_KEY: hexKey })
  for (const value of await storedKeys(sealing.service)) assert.match(value, /^pwenc:v1:/)
  assert.equal(await publicKeyOf(sealing.service), servicePublicKey)
  await assertRecordsVerify(sealing.service, shop, servicePublicKey)
  const sealedLog = sealing.logs.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'stored signing keys sealed')
  assert.equal(sealedLog?.count, 2)
  assert.equal(sealing.logs.join('').includes('PRIVATE KEY'), false, 'no key in the log')
  await sealing.service.close()

  const next = await start({ PAYWATCH_SECRETS_KEY: hexKey })
  assert.equal(
    next.logs.some((line) => line.includes('stored signing keys sealed')),
    false,
    'nothing left to seal',
  )
  await next.service.close()
})

test('PAYWATCH_SIGNING_KEY is used as given and not stored, also with the secrets key', async () => {
  const start = await installation()
  const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string
  const { service } = await start({ PAYWATCH_SIGNING_KEY: pem, PAYWATCH_SECRETS_KEY: hexKey })
  assert.deepEqual(await service.database.db.selectFrom('service_keys').selectAll().execute(), [])
  const shop = await newIntegration(service)
  await assertRecordsVerify(service, shop, await publicKeyOf(service))
  await service.close()
})

test('CLI: integrations create seals the new key, and refuses a wrong key before storing one', async () => {
  const start = await installation()
  const first = await start({ PAYWATCH_SECRETS_KEY: hexKey })
  const shop = await newIntegration(first.service)
  const servicePublicKey = await publicKeyOf(first.service)
  await first.service.close()

  const created = JSON.parse(await cli(start.configOf({ PAYWATCH_SECRETS_KEY: hexKey }), 'integrations', 'create', shop.accountId))
  await assert.rejects(
    cli(start.configOf({ PAYWATCH_SECRETS_KEY: randomBytes(32).toString('hex') }), 'integrations', 'create', shop.accountId),
    /PAYWATCH_SECRETS_KEY does not open the stored signing keys/,
  )
  await assert.rejects(cli(start.configOf({}), 'integrations', 'create', shop.accountId), /PAYWATCH_SECRETS_KEY is missing/)

  const again = await start({ PAYWATCH_SECRETS_KEY: hexKey })
  const stored = await storedKeys(again.service)
  assert.equal(stored.length, 3, 'the refused commands stored nothing')
  for (const value of stored) assert.match(value, /^pwenc:v1:/)
  await assertRecordsVerify(again.service, { ...shop, integration: created }, servicePublicKey)
  await again.service.close()
})
