// The Standard Webhooks secrets a callback is signed with (webhookSecretsOf): read in one query when every
// owner has one, made once for an owner without one, the same secret on every later read; the worker's
// source of them keeps what it read as long as its freshness says.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { KyselyPlugin } from 'kysely'
import { freshMsFor } from '../../src/callbacks/cache-freshness.ts'
import { createWebhookSecretSource } from '../../src/callbacks/webhook-secret-source.ts'
import { createAccount } from '../../src/store/accounts.ts'
import { accountOwner, webhookSecretsOf } from '../../src/store/webhook-secrets.ts'
import { useTestDatabase } from '../support/database.ts'

const database = useTestDatabase()

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

test('the secret source reads an owner again only after its freshness, or at once after forget()', async () => {
  const account = await createAccount(database.db, 'cached')
  const reads = () => statements.filter((kind) => kind === 'SelectQueryNode').length
  const statements: string[] = []
  const db = database.db.withPlugin(counted(statements))
  const clock = () => new Date('2026-11-26T12:00:00.000Z')
  const everyTime = createWebhookSecretSource(db, clock, null, 0)
  await everyTime.secretsFor(account.id, null)
  await everyTime.secretsFor(account.id, null)
  assert.equal(reads(), 3, 'read, made, read again; then read again')

  statements.length = 0
  const kept = createWebhookSecretSource(db, clock, null, freshMsFor('pglite'))
  const first = await kept.secretsFor(account.id, null)
  assert.equal((await kept.secretsFor(account.id, null)).secret, first.secret)
  assert.equal(reads(), 1, 'one process writes the embedded database: what it read stays fresh')
  kept.forget()
  await kept.secretsFor(account.id, null)
  assert.equal(reads(), 2, 'a rotation here forgets it')
  assert.ok(freshMsFor('postgres') <= 1000, 'other nodes may rotate a secret: read again within a second')
})
