// The store's paywatch_origin() (the index of an account's endpoints) and the service's endpointUrlOf() say
// the same endpoint for every http(s) callback URL, and an index lookup by it finds the tracking.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { endpointUrlOf } from '../../src/domain/endpoint-url.ts'
import { createAccount } from '../../src/store/accounts.ts'
import { isAccountEndpoint } from '../../src/store/webhook-endpoints.ts'
import { useTestDatabase } from '../support/database.ts'
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
