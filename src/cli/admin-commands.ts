import type { Command } from 'commander'
import type { Config } from '../config/config.ts'
import { createAccount, listAccounts } from '../store/accounts.ts'
import { createApiKey, listApiKeys, revokeApiKey } from '../store/api-keys.ts'
import { requireAccount, withDatabase } from './with-database.ts'

const print = (value: unknown) => console.log(JSON.stringify(value, null, 2))

/** Accounts and API keys without HTTP (docs/api.md §6: the CLI does what the admin API does). */
export function registerAdminCommands(program: Command, config: () => Config): void {
  const accounts = program.command('accounts').description('manage accounts')
  accounts.command('create <name>').description('create an account').action(async (name: string) => {
    await withDatabase(config(), async (db) => {
      const account = await createAccount(db, name)
      print({ id: account.id, name: account.name })
    })
  })
  accounts.command('list').description('list accounts').action(async () => {
    await withDatabase(config(), async (db) => print((await listAccounts(db)).map((a) => ({ id: a.id, name: a.name }))))
  })

  const keys = program.command('keys').description('manage API keys')
  keys.command('create <accountId>').description('create an API key (shown once)').action(async (accountId: string) => {
    await withDatabase(config(), async (db) => {
      await requireAccount(db, accountId)
      print(await createApiKey(db, accountId))
    })
  })
  keys.command('list <accountId>').description("list an account's keys (never the keys themselves)").action(async (accountId: string) => {
    await withDatabase(config(), async (db) => {
      await requireAccount(db, accountId)
      print((await listApiKeys(db, accountId)).map((k) => ({ id: k.id, prefix: k.prefix, revoked: k.revokedAt !== null })))
    })
  })
  keys.command('revoke <keyId>').description('revoke an API key').action(async (keyId: string) => {
    await withDatabase(config(), async (db) => {
      if (!(await revokeApiKey(db, keyId, new Date()))) throw new Error(`API key ${keyId} not found`)
      print({ id: keyId, revoked: true })
    })
  })
}
