// Storage rules of the foundation, on whichever store the suite runs against (PGlite by default,
// PostgreSQL with DATABASE_URL): migrations, hashed API keys, one tracking per payment under races.
import assert from 'node:assert/strict'
import { createHash, randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { listMigrations, migrate } from '../../src/store/infrastructure/migrate.ts'
import { createAccount } from '../../src/store/accounts.ts'
import { authenticateApiKey, createApiKey, revokeApiKey } from '../../src/store/api-keys.ts'
import { useTestDatabase } from '../support/database.ts'
import { startAnvil, type Anvil } from '../support/index.ts'
import { startTestService, type TestService } from '../support/service.ts'
import { createBody } from '../http/payments-fixtures.ts'
import { insertTestTracking, randomAddress } from '../support/trackings.ts'
import { attachTransaction, findTrackingBySecret, insertTracking } from '../../src/store/trackings.ts'
import { completeTracking } from '../../src/store/complete-tracking.ts'
import { fullRecord } from '../../src/domain/records.ts'

describe('database', () => {
  const database = useTestDatabase()

  test('migrations are recorded once and a second run applies nothing', async () => {
    const files = listMigrations()
    assert.ok(files.length >= 1)
    assert.deepEqual(
      files.map((m) => m.version),
      [...files.map((m) => m.version)].sort((a, b) => a - b),
    )
    assert.deepEqual(await migrate(database.db), [])
    assert.deepEqual(await Promise.all([migrate(database.db), migrate(database.db)]), [[], []])
    const rows = await sql<{ version: number }>`SELECT version FROM schema_migrations ORDER BY version`.execute(database.db)
    assert.deepEqual(
      rows.rows.map((r) => Number(r.version)),
      files.map((m) => m.version),
    )
  })

  test('an API key is stored only as its SHA-256; the clear key is nowhere in the database', async () => {
    const account = await createAccount(database.db, 'hash check')
    const { id, key } = await createApiKey(database.db, account.id)
    assert.match(key, /^pw_[A-Za-z0-9_-]{32,}$/)
    assert.ok(Buffer.from(key.slice(3), 'base64url').length >= 16, 'at least 128 random bits')

    const row = await database.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
    assert.deepEqual(Buffer.from(row.key_hash), createHash('sha256').update(key).digest())
    assert.ok(key.startsWith(row.prefix) && row.prefix.length < 10)
    // Every text and bytea value of every table, searched for the key.
    const dump = await sql<{ t: string }>`
      SELECT string_agg(row_to_json(k)::text, ' ') AS t FROM api_keys k`.execute(database.db)
    assert.equal(dump.rows[0]!.t.includes(key), false)
    assert.equal(dump.rows[0]!.t.includes(key.slice(10)), false)

    assert.deepEqual(await authenticateApiKey(database.db, key), { keyId: id, accountId: account.id })
    assert.equal(await authenticateApiKey(database.db, key.slice(0, -1)), undefined)
    assert.equal(await revokeApiKey(database.db, id, new Date()), true)
    assert.equal(await authenticateApiKey(database.db, key), undefined)
    assert.equal(await revokeApiKey(database.db, 'no-such-key', new Date()), false)
  })

  test('a created tracking is returned exactly as it reads back (payload in its stored key order)', async () => {
    const account = await createAccount(database.db, 'read back')
    const payload = { zeta: 1, a: { y: 'Zoë', b: [1, 2.5] }, ab: null }
    const created = await insertTestTracking(database.db, account.id, {
      payload,
      feeAmount: '0.25',
      feeReceiver: randomAddress(),
      nonce: 2n ** 63n,
    })
    const read = await findTrackingBySecret(database.db, account.id, created.secretId)
    assert.deepEqual(created, read)
    // jsonb orders keys by length, then bytes: the create answer shows what every later read shows.
    assert.deepEqual(Object.keys(created.payload!), ['a', 'ab', 'zeta'])
    assert.equal(JSON.stringify(fullRecord(created)), JSON.stringify(fullRecord(read!)))
    assert.equal(await insertTracking(database.db, { ...created, id: randomUUID() }), undefined, 'the same secret is a conflict')
  })

  test('a transaction is attached only to a pending trace: a trace that timed out stays as it completed', async () => {
    const account = await createAccount(database.db, 'attach')
    const trace = await insertTestTracking(database.db, account.id, { transaction: null })
    const failed = await completeTracking(database.db, trace.id, { status: 'failed', failedReason: 'TRACKING_TIMED_OUT' }, new Date())
    assert.equal(failed?.status, 'failed')
    assert.equal(await attachTransaction(database.db, trace.id, `0x${'ab'.repeat(32)}`, new Date()), undefined)
    const stored = await findTrackingBySecret(database.db, account.id, trace.secretId)
    assert.equal(stored?.transaction, null)
    assert.deepEqual(stored, failed)
  })

  test('two keys never collide and each authenticates its own account', async () => {
    const a = await createAccount(database.db, 'a')
    const b = await createAccount(database.db, 'b')
    const keyA = await createApiKey(database.db, a.id)
    const keyB = await createApiKey(database.db, b.id)
    assert.notEqual(keyA.key, keyB.key)
    assert.equal((await authenticateApiKey(database.db, keyA.key))?.accountId, a.id)
    assert.equal((await authenticateApiKey(database.db, keyB.key))?.accountId, b.id)
  })
})

describe('one tracking per payment under concurrent creates', () => {
  let anvil: Anvil
  let service: TestService
  let apiKey: string
  before(async () => {
    anvil = await startAnvil()
    service = await startTestService({
      chains: { ethereum: { rpc: [anvil.rpcUrl], chainId: anvil.chainId } },
      env: { PAYWATCH_RATE_RPS: '100000', PAYWATCH_RATE_PARALLEL: '1000', PAYWATCH_RATE_DAILY: '1000000' },
      background: false,
    })
    ;({ apiKey } = await service.newAccount())
  })
  after(async () => {
    await service?.close()
    await anvil?.stop()
  })
  const post = (body: unknown) => service.api(apiKey, { method: 'POST', url: '/v2/payments', payload: body as object })

  test('20 identical POSTs in parallel → exactly one 201, nineteen 200 with the same record, one row', async () => {
    const body = createBody()
    const responses = await Promise.all(Array.from({ length: 20 }, () => post(body)))
    const codes = responses.map((r) => r.statusCode).sort((a, b) => a - b)
    assert.deepEqual(codes, [...Array<number>(19).fill(200), 201])
    const created = responses.find((r) => r.statusCode === 201)!.json()
    for (const res of responses) assert.deepEqual(res.json(), created)
    const rows = await service.database.db.selectFrom('trackings').select('id').where('secret_id', '=', String(body.secret_id)).execute()
    assert.equal(rows.length, 1)
  })

  test('20 parallel POSTs of one payment under different secret_ids → one 201, the rest 409', async () => {
    const body = createBody()
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post({ ...body, secret_id: `${String(body.secret_id)}-${i}` })),
    )
    const codes = responses.map((r) => r.statusCode).sort((a, b) => a - b)
    assert.deepEqual(codes, [201, ...Array<number>(19).fill(409)])
    const rows = await service.database.db
      .selectFrom('trackings')
      .select('id')
      .where('sender', '=', String(body.sender).toLowerCase())
      .where('nonce', '=', String(body.nonce))
      .execute()
    assert.equal(rows.length, 1)
  })

  test('a trace and its transaction racing: one row, and the transaction attached', async () => {
    const body = createBody()
    const tx = `0x${'12'.repeat(32)}`
    const responses = await Promise.all(Array.from({ length: 10 }, (_, i) => post(i % 2 ? { ...body, transaction: tx } : body)))
    assert.deepEqual(responses.filter((r) => r.statusCode === 201).length, 1)
    assert.ok(
      responses.every((r) => r.statusCode === 201 || r.statusCode === 200),
      responses.map((r) => r.statusCode).join(),
    )
    const read = await service.api(apiKey, { method: 'GET', url: `/v2/payments/${String(body.secret_id)}` })
    assert.equal(read.json().transaction, tx)
  })

  test('two different transactions racing to one trace: one is attached (200), the other conflicts (409)', async () => {
    for (let round = 0; round < 5; round++) {
      const trace = createBody()
      assert.equal((await post(trace)).statusCode, 201)
      const transactions = [`0x${'a1'.repeat(32)}`, `0x${'b2'.repeat(32)}`]
      const responses = await Promise.all(transactions.map((transaction) => post({ ...trace, transaction })))
      assert.deepEqual(responses.map((r) => r.statusCode).sort(), [200, 409], responses.map((r) => r.body).join('\n'))
      const winner = transactions[responses.findIndex((r) => r.statusCode === 200)]
      assert.equal(responses.find((r) => r.statusCode === 200)!.json().transaction, winner)
      const read = await service.api(apiKey, { method: 'GET', url: `/v2/payments/${String(trace.secret_id)}` })
      assert.equal(read.json().transaction, winner)
    }
  })
})
