import type { Command } from 'commander'
import type { Config } from '../config/config.ts'
import { parseScopes } from '../domain/app-scopes.ts'
import { parseIsoTimestamp } from '../domain/iso-timestamp.ts'
import { normalizeShopHost, SHOP_HOST_HINT } from '../domain/shop-host.ts'
import { createGrant, listGrants, revokeGrant } from '../store/app-grants.ts'
import { createApp, deleteApp, findApp, listApps } from '../store/apps.ts'
import type { Db } from '../store/database.ts'
import { createLink, listLinks, removeLink } from '../store/links.ts'
import { connectShop, disconnectShop, listShops } from '../store/shops.ts'
import { appJson, grantJson } from '../http/routes/admin-apps.ts'
import { linkJson } from '../http/routes/admin-links-shops.ts'
import { requireAccount, withDatabase } from './with-database.ts'

const print = (value: unknown) => console.log(JSON.stringify(value, null, 2))

/** `paywatch links|shops|apps …`: what the admin API does for them, without HTTP (docs/api.md §6). */
export function registerAccountDataCommands(program: Command, config: () => Config): void {
  const run = (work: (db: Db) => Promise<void>) => withDatabase(config(), work)

  const links = program.command('links').description('manage payment links')
  links.command('create <accountId>').description('create a payment link').option('--name <name>', 'a name for operators')
    .action((accountId: string, options: { name?: string }) => run(async (db) => {
      await requireAccount(db, accountId)
      print(linkJson(await createLink(db, accountId, options.name?.trim() || null)))
    }))
  links.command('list <accountId>').description("list an account's payment links")
    .action((accountId: string) => run(async (db) => {
      await requireAccount(db, accountId)
      print((await listLinks(db, accountId)).map(linkJson))
    }))
  links.command('remove <linkId>').description('remove a payment link (no new payments; its payments are no longer listed)')
    .action((linkId: string) => run(async (db) => {
      if (!(await removeLink(db, linkId, new Date()))) throw new Error(`link ${linkId} not found`)
      print({ id: linkId, removed: true })
    }))

  const shops = program.command('shops').description('manage connected shops')
  shops.command('connect <accountId> <shop>').description('connect a shop host name to an account')
    .action((accountId: string, shop: string) => {
      const host = normalizeShopHost(shop)
      if (!host) throw new Error(`shop must be ${SHOP_HOST_HINT}`)
      return run(async (db) => {
        await requireAccount(db, accountId)
        const connected = await connectShop(db, accountId, host)
        print({ shop: connected.shop.shop, created: connected.created })
      })
    })
  shops.command('list <accountId>').description("list an account's connected shops")
    .action((accountId: string) => run(async (db) => {
      await requireAccount(db, accountId)
      print((await listShops(db, accountId)).map((s) => ({ shop: s.shop, created_at: s.createdAt.toISOString() })))
    }))
  shops.command('disconnect <accountId> <shop>').description('disconnect a shop (its past payments stay readable)')
    .action((accountId: string, shop: string) => run(async (db) => {
      const host = normalizeShopHost(shop)
      if (!host || !(await disconnectShop(db, accountId, host))) throw new Error(`shop ${shop} is not connected to account ${accountId}`)
      print({ shop: host, disconnected: true })
    }))

  const apps = program.command('apps').description('manage apps and the grants (access tokens) accounts give them')
  apps.command('create <ownerAccountId> <name>').description('create an app owned by the account')
    .action((accountId: string, name: string) => {
      if (name.trim() === '' || name.length > 200) throw new Error('name must be 1 to 200 characters')
      return run(async (db) => {
        await requireAccount(db, accountId)
        print(appJson(await createApp(db, accountId, name.trim())))
      })
    })
  apps.command('list <ownerAccountId>').description('list the apps an account owns')
    .action((accountId: string) => run(async (db) => {
      await requireAccount(db, accountId)
      print((await listApps(db, accountId)).map(appJson))
    }))
  apps.command('delete <appId>').description('delete an app and all its grants')
    .action((appId: string) => run(async (db) => {
      if (!(await deleteApp(db, appId))) throw new Error(`app ${appId} not found`)
      print({ id: appId, deleted: true })
    }))
  apps.command('grant <appId> <accountId>').description('the account grants the app scopes; prints the access token (shown once)')
    .requiredOption('--scopes <scopes>', 'comma-separated: payments.shopify.read (or payments.read), checkouts.shopify.read')
    .option('--expires-at <time>', 'ISO 8601 time at which the token stops working')
    .action((appId: string, accountId: string, options: { scopes: string; expiresAt?: string }) => {
      const scopes = parseScopes(options.scopes.split(',').map((s) => s.trim()).filter(Boolean))
      if (!scopes.ok) throw new Error(`--scopes ${scopes.message}`)
      let expiresAt: Date | null = null
      if (options.expiresAt !== undefined) {
        expiresAt = parseIsoTimestamp(options.expiresAt) ?? null
        if (!expiresAt || expiresAt.getTime() <= Date.now()) throw new Error('--expires-at must be a future ISO 8601 time')
      }
      return run(async (db) => {
        if (!(await findApp(db, appId))) throw new Error(`app ${appId} not found`)
        await requireAccount(db, accountId)
        const created = await createGrant(db, { appId, accountId, scopes: scopes.scopes, expiresAt })
        print({ ...grantJson(created.grant), access_token: created.accessToken })
      })
    })
  apps.command('grants <appId>').description("list an app's grants (never the tokens)")
    .action((appId: string) => run(async (db) => {
      if (!(await findApp(db, appId))) throw new Error(`app ${appId} not found`)
      print((await listGrants(db, appId)).map(grantJson))
    }))
  apps.command('revoke <grantId>').description("revoke a grant: its access token stops working")
    .action((grantId: string) => run(async (db) => {
      if (!(await revokeGrant(db, grantId, new Date()))) throw new Error(`grant ${grantId} not found`)
      print({ id: grantId, revoked: true })
    }))
}
