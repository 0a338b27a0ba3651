// A tracking's callback origin (the index of an account's endpoints): written by the service's endpointUrlOf()
// at create, by the store's paywatch_origin() for the trackings stored before it was a column; both say the
// same endpoint for every http(s) callback URL, and an index lookup by it finds the tracking.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { endpointUrlOf } from '../../src/domain/endpoint-url.ts'
import { createAccount } from '../../src/store/accounts.ts'
import { migrate } from '../../src/store/infrastructure/migrate.ts'
import { isAccountEndpoint } from '../../src/store/webhook-endpoints.ts'
import { createTestDatabase, useTestDatabase } from '../support/database.ts'
import { insertTestTracking } from '../support/trackings.ts'

const database = useTestDatabase()

const urls = [
  'https://Shop.Example:443/cb',
  'http://a.b:80',
  'http://a.b:8080/x',
  'HTTP://user:pw@Host.IO:0099/p?q#f',
  'https://[::1]:443/',
  'https://[::1]:8443/hook',
  'https://h:/x',
  'https://h?x=1',
  'https://merchant.example/paywatch/callback',
]

test('paywatch_origin() gives the endpoint endpointUrlOf() gives, for every http(s) callback URL', async () => {
  const { rows } = await sql<{ u: string; o: string | null }>`SELECT u, paywatch_origin(u) AS o FROM unnest(${urls}::text[]) AS u`.execute(
    database.db,
  )
  for (const row of rows) assert.equal(row.o, endpointUrlOf(row.u), row.u)
})

test("a tracking's callback is found among its account's endpoints by the origin", async () => {
  const account = await createAccount(database.db, 'origins')
  await insertTestTracking(database.db, account.id, { callback: 'HTTPS://Merchant.Example:443/a?b=1' })
  assert.equal(await isAccountEndpoint(database.db, account.id, 'https://merchant.example'), true)
  assert.equal(await isAccountEndpoint(database.db, account.id, 'https://merchant.example:8443'), false)
})

test('a tracking stored before its origin was a column, or by a node not upgraded yet, gets it from its callback; identities stay unique (migration 0038)', async () => {
  const before = await createTestDatabase({ migrateThrough: 37 })
  try {
    const account = await createAccount(before.db, 'origin backfill')
    const insert = (id: string, callback: string | null, nonce: number) =>
      sql`
      INSERT INTO trackings (id, account_id, secret_id, shape, blockchain, sender, nonce, receiver, token, decimals,
        commitment, confirmations, after_block, amount, callback, created_at, updated_at)
      VALUES (${id}, ${account.id}, ${`secret-${id}`}, 'current', 'ethereum', '0x1111111111111111111111111111111111111111',
        ${nonce}, '0x2222222222222222222222222222222222222222', '0x3333333333333333333333333333333333333333', 18,
        'confirmed', 1, 1, '1', ${callback}, now(), now())`.execute(before.db)
    await insert('with-callback', 'HTTPS://Shop.Example:443/cb?x=1', 1)
    await insert('without', null, 2)
    assert.deepEqual(await migrate(before.db, { through: 38 }), ['0038_trackings_lighter_writes'])

    const { rows } = await sql<{ id: string; callback_origin: string | null }>`
      SELECT id, callback_origin FROM trackings ORDER BY id`.execute(before.db)
    assert.deepEqual(rows, [
      { id: 'with-callback', callback_origin: 'https://shop.example' },
      { id: 'without', callback_origin: null },
    ])
    assert.equal(await isAccountEndpoint(before.db, account.id, 'https://shop.example'), true)
    // A node not upgraded yet writes no origin: it is filled in for its rows.
    await insert('older-node', 'http://Other.Example:80/cb', 3)
    const { rows: older } = await sql<{ callback_origin: string | null }>`
      SELECT callback_origin FROM trackings WHERE id = 'older-node'`.execute(before.db)
    assert.deepEqual(older, [{ callback_origin: 'http://other.example' }])
    await assert.rejects(insert('same-identity', null, 1), /trackings_identity_key/, 'one payment per account, chain, sender and nonce')
    await assert.rejects(
      sql`UPDATE trackings SET secret_id = 'secret-without' WHERE id = 'with-callback'`.execute(before.db),
      /trackings_secret_key/,
      'one secret_id per account',
    )
  } finally {
    await before.close()
  }
})
