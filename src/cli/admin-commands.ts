import type { Command } from 'commander'
import { createAccount, createApiKey, listAccounts, listApiKeys, revokeApiKey } from '../admin/accounts.ts'
import type { AdminDeps } from '../admin/admin-deps.ts'
import { systemClock, type Clock } from '../common/clock.ts'
import type { Config } from '../config/config.ts'
import { withDatabase } from './with-database.ts'
import { devAdmin, devBeside } from './beside-dev.ts'

const print = (value: unknown) => console.log(JSON.stringify(value, null, 2))
const pick = (value: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.map((key) => [key, value[key]]))

/** Accounts and API keys without HTTP (docs/api.md §6: the CLI does what the admin API does). */
export function registerAdminCommands(program: Command, config: () => Config, clock: Clock = systemClock): void {
  const run = (work: (deps: AdminDeps) => Promise<void>) => withDatabase(config(), (db) => work({ db, clock }))
  // Beside a running `paywatch dev` (embedded database), accounts and keys go through its admin API.
  const throughDev = async (work: (admin: (method: string, path: string, body?: unknown) => Promise<any>) => Promise<void>) => {
    const dev = devBeside(config())
    if (!dev) return false
    await work((method, path, body) => devAdmin(dev.session, method, path, body))
    return true
  }

  const accounts = program.command('accounts').description('manage accounts')
  accounts
    .command('create <name>')
    .description('create an account')
    .action(async (name: string) => {
      if (await throughDev(async (admin) => print(pick(await admin('POST', '/admin/accounts', { name }), ['id', 'name'])))) return
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
      if (
        await throughDev(async (admin) =>
          print((await admin('GET', '/admin/accounts')).map((a: Record<string, unknown>) => pick(a, ['id', 'name']))),
        )
      ) {
        return
      }
      await run(async (deps) => print((await listAccounts(deps)).map((a) => ({ id: a.id, name: a.name }))))
    })

  const keys = program.command('keys').description('manage API keys')
  keys
    .command('create <accountId>')
    .description('create an API key (shown once)')
    .action(async (accountId: string) => {
      const path = `/admin/accounts/${encodeURIComponent(accountId)}/api-keys`
      if (await throughDev(async (admin) => print(pick(await admin('POST', path), ['id', 'key'])))) return
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
      const path = `/admin/accounts/${encodeURIComponent(accountId)}/api-keys`
      const shown = (k: { id: string; prefix: string; revoked_at: string | null }) => ({
        id: k.id,
        prefix: k.prefix,
        revoked: k.revoked_at !== null,
      })
      if (await throughDev(async (admin) => print((await admin('GET', path)).map(shown)))) return
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
      const revoke = async (admin: (method: string, path: string) => Promise<unknown>) => {
        await admin('DELETE', `/admin/api-keys/${encodeURIComponent(keyId)}`)
        print({ id: keyId, revoked: true })
      }
      if (await throughDev(revoke)) return
      await run(async (deps) => {
        if ((await revokeApiKey(deps, keyId)).kind !== 'revoked') throw new Error(`API key ${keyId} not found`)
        print({ id: keyId, revoked: true })
      })
    })
}
