// The Standard Webhooks secrets a callback is signed with (webhookSecretsOf): read in one query when every
// owner has one, made once for an owner without one, the same secret on every later read.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { KyselyPlugin } from 'kysely'
import { createAccount } from '../../src/store/accounts.ts'
import { accountOwner, webhookSecretsOf } from '../../src/store/webhook-secrets.ts'
import { createTestDatabase } from '../support/database.ts'

let database: Awaited<ReturnType<typeof createTestDatabase>>
before(async () => {
  database = await createTestDatabase()
})
after(async () => database?.close())

/** The kinds of statement `db` runs while the returned db is used. */
const counted = (statements: string[]): KyselyPlugin => ({
  transformQuery: (args) => {
    statements.push(args.node.kind)
    return args.node
  },
  transformResult: async (args) => args.result,
})

test('an owner without a secret gets one at its first read; later reads find the same secret in one query', async () => {
  const now = new Date('2026-11-26T12:00:00.000Z')
  const [old, fresh] = await Promise.all([createAccount(database.db, 'has-secret'), createAccount(database.db, 'no-secret')])
  const owners = [old, fresh].map((account) => ({ owner: accountOwner(account.id), accountId: account.id }))
  const first = await webhookSecretsOf(database.db, owners.slice(0, 1), now, null)

  const statements: string[] = []
  const both = await webhookSecretsOf(database.db.withPlugin(counted(statements)), owners, now, null)
  assert.equal(both.get(owners[0]!.owner)?.secret, first.get(owners[0]!.owner)?.secret, 'an existing secret is kept')
  assert.ok(both.get(owners[1]!.owner)?.secret, 'a missing one is made')
  assert.deepEqual(statements, ['SelectQueryNode', 'InsertQueryNode', 'SelectQueryNode'])

  statements.length = 0
  const again = await webhookSecretsOf(database.db.withPlugin(counted(statements)), owners, now, null)
  assert.deepEqual(statements, ['SelectQueryNode'], 'one read when every owner has its secret')
  for (const { owner } of owners) assert.equal(again.get(owner)?.secret, both.get(owner)?.secret)
})
