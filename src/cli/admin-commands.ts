import type { Command } from 'commander'
import { createAccount, createApiKey, listAccounts, listApiKeys, revokeApiKey } from '../admin/accounts.ts'
import type { AdminDeps } from '../admin/admin-deps.ts'
import { systemClock, type Clock } from '../common/clock.ts'
import type { Config } from '../config/config.ts'
import { withDatabase } from './with-database.ts'

const print = (value: unknown) => console.log(JSON.stringify(value, null, 2))

/** Accounts and API keys without HTTP (docs/api.md §6: the CLI does what the admin API does). */
export function registerAdminCommands(program: Command, config: () => Config, clock: Clock = systemClock): void {
  const run = (work: (deps: AdminDeps) => Promise<void>) => withDatabase(config(), (db) => work({ db, clock }))

  const accounts = program.command('accounts').description('manage accounts')
  accounts
    .command('create <name>')
    .description('create an account')
    .action(async (name: string) => {
      await run(async (deps) => {
        // The operator's argument is taken verbatim (the admin API trims and bounds a JSON name).
        const { account } = await createAccount(deps, name)
        print({ id: account.id, name: account.name })
      })
    })
  accounts
    .command('list')
    .description('list accounts')
    .action(async () => {
      await run(async (deps) => print((await listAccounts(deps)).map((a) => ({ id: a.id, name: a.name }))))
    })

  const keys = program.command('keys').description('manage API keys')
  keys
    .command('create <accountId>')
    .description('create an API key (shown once)')
    .action(async (accountId: string) => {
      await run(async (deps) => {
        const created = await createApiKey(deps, accountId)
        if (created.kind !== 'created') throw new Error(`account ${accountId} not found`)
        print(created.key)
      })
    })
  keys
    .command('list <accountId>')
    .description("list an account's keys (never the keys themselves)")
    .action(async (accountId: string) => {
      await run(async (deps) => {
        const listed = await listApiKeys(deps, accountId)
        if (listed.kind !== 'listed') throw new Error(`account ${accountId} not found`)
        print(listed.keys.map((k) => ({ id: k.id, prefix: k.prefix, revoked: k.revokedAt !== null })))
      })
    })
  keys
    .command('revoke <keyId>')
    .description('revoke an API key')
    .action(async (keyId: string) => {
      await run(async (deps) => {
        if ((await revokeApiKey(deps, keyId)).kind !== 'revoked') throw new Error(`API key ${keyId} not found`)
        print({ id: keyId, revoked: true })
      })
    })
}
