import type { Command } from 'commander'
import type { AdminDeps } from '../admin/admin-deps.ts'
import { createApp, deleteApp, grantApp, listAppGrants, listApps, revokeGrant } from '../admin/apps.ts'
import { readGrantRequest, type GrantInput } from '../admin/grant-request.ts'
import { createLink, listLinks, removeLink } from '../admin/links.ts'
import { appRequestFields, readRequiredName } from '../admin/names.ts'
import { appJson, grantJson, linkJson, shopJson } from '../admin/records.ts'
import { connectShop, disconnectShop, listShops, readShopRequest } from '../admin/shops.ts'
import { systemClock, type Clock } from '../common/clock.ts'
import type { Config } from '../config/config.ts'
import type { FieldError } from '../domain/field-errors.ts'
import { SHOP_HOST_HINT } from '../domain/shop-host.ts'
import { withDatabase } from './with-database.ts'

const print = (value: unknown) => console.log(JSON.stringify(value, null, 2))

/** `paywatch links|shops|apps …`: what the admin API does for them, without HTTP (docs/api.md §6). */
export function registerAccountDataCommands(program: Command, config: () => Config, clock: Clock = systemClock): void {
  const run = (work: (deps: AdminDeps) => Promise<void>) => withDatabase(config(), (db) => work({ db, clock }))
  const accountNotFound = (accountId: string) => new Error(`account ${accountId} not found`)
  // Arguments a rule refuses fail before the database is opened (the use case reads them again):
  // a typo is reported as such even while the database is unreachable or in use.
  const shopMessage = `shop must be ${SHOP_HOST_HINT}`
  const appNameMessage = 'name must be 1 to 200 characters'

  const links = program.command('links').description('manage payment links')
  links
    .command('create <accountId>')
    .description('create a payment link')
    .option('--name <name>', 'a name for operators')
    .action((accountId: string, options: { name?: string }) =>
      run(async (deps) => {
        const created = await createLink(deps, accountId, options.name?.trim() || null)
        if (created.kind !== 'created') throw accountNotFound(accountId)
        print(linkJson(created.link))
      }),
    )
  links
    .command('list <accountId>')
    .description("list an account's payment links")
    .action((accountId: string) =>
      run(async (deps) => {
        const listed = await listLinks(deps, accountId)
        if (listed.kind !== 'listed') throw accountNotFound(accountId)
        print(listed.links.map(linkJson))
      }),
    )
  links
    .command('remove <linkId>')
    .description('remove a payment link (no new payments; its payments are no longer listed)')
    .action((linkId: string) =>
      run(async (deps) => {
        if ((await removeLink(deps, linkId)).kind !== 'removed') throw new Error(`link ${linkId} not found`)
        print({ id: linkId, removed: true })
      }),
    )

  const shops = program.command('shops').description('manage connected shops')
  shops
    .command('connect <accountId> <shop>')
    .description('connect a shop host name to an account')
    .action((accountId: string, shop: string) => {
      if (!readShopRequest({ shop }).ok) throw new Error(shopMessage)
      return run(async (deps) => {
        const connected = await connectShop(deps, accountId, shop)
        if (connected.kind === 'invalid') throw new Error(shopMessage)
        if (connected.kind === 'not-found') throw accountNotFound(accountId)
        print({ shop: connected.shop.shop, created: connected.created })
      })
    })
  shops
    .command('list <accountId>')
    .description("list an account's connected shops")
    .action((accountId: string) =>
      run(async (deps) => {
        const listed = await listShops(deps, accountId)
        if (listed.kind !== 'listed') throw accountNotFound(accountId)
        print(listed.shops.map(shopJson))
      }),
    )
  shops
    .command('disconnect <accountId> <shop>')
    .description('disconnect a shop (its past payments stay readable)')
    .action((accountId: string, shop: string) =>
      run(async (deps) => {
        const disconnected = await disconnectShop(deps, accountId, shop)
        if (disconnected.kind !== 'disconnected') throw new Error(`shop ${shop} is not connected to account ${accountId}`)
        print({ shop: disconnected.shop, disconnected: true })
      }),
    )

  const apps = program.command('apps').description('manage apps and the grants (access tokens) accounts give them')
  apps
    .command('create <ownerAccountId> <name>')
    .description('create an app owned by the account')
    .action((accountId: string, name: string) => {
      if (!readRequiredName({ name }, appRequestFields).ok) throw new Error(appNameMessage)
      return run(async (deps) => {
        const created = await createApp(deps, accountId, name)
        if (created.kind === 'invalid') throw new Error(appNameMessage)
        if (created.kind === 'not-found') throw accountNotFound(accountId)
        print(appJson(created.app))
      })
    })
  apps
    .command('list <ownerAccountId>')
    .description('list the apps an account owns')
    .action((accountId: string) =>
      run(async (deps) => {
        const listed = await listApps(deps, accountId)
        if (listed.kind !== 'listed') throw accountNotFound(accountId)
        print(listed.apps.map(appJson))
      }),
    )
  apps
    .command('delete <appId>')
    .description('delete an app and all its grants')
    .action((appId: string) =>
      run(async (deps) => {
        if ((await deleteApp(deps, appId)).kind !== 'deleted') throw new Error(`app ${appId} not found`)
        print({ id: appId, deleted: true })
      }),
    )
  apps
    .command('grant <appId> <accountId>')
    .description('the account grants the app scopes; prints the access token (shown once)')
    .requiredOption('--scopes <scopes>', 'comma-separated: payments.shopify.read (or payments.read), checkouts.shopify.read')
    .option('--expires-at <time>', 'ISO 8601 time at which the token stops working')
    .action((appId: string, accountId: string, options: { scopes: string; expiresAt?: string }) => {
      const input: GrantInput = {
        accountId,
        scopes: options.scopes
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
        expiresAt: options.expiresAt,
      }
      const read = readGrantRequest(input, clock())
      const optionProblem = read.kind === 'invalid' ? grantOptionProblem(read.errors) : undefined
      if (optionProblem) throw new Error(optionProblem)
      return run(async (deps) => {
        const created = await grantApp(deps, appId, input)
        if (created.kind === 'invalid') throw new Error(grantOptionProblem(created.errors) ?? `account ${accountId} not found`)
        if (created.kind === 'not-found') throw created.what === 'app' ? new Error(`app ${appId} not found`) : accountNotFound(accountId)
        print({ ...grantJson(created.grant), access_token: created.accessToken })
      })
    })
  apps
    .command('grants <appId>')
    .description("list an app's grants (never the tokens)")
    .action((appId: string) =>
      run(async (deps) => {
        const listed = await listAppGrants(deps, appId)
        if (listed.kind !== 'listed') throw new Error(`app ${appId} not found`)
        print(listed.grants.map(grantJson))
      }),
    )
  apps
    .command('revoke <grantId>')
    .description('revoke a grant: its access token stops working')
    .action((grantId: string) =>
      run(async (deps) => {
        if ((await revokeGrant(deps, grantId)).kind !== 'revoked') throw new Error(`grant ${grantId} not found`)
        print({ id: grantId, revoked: true })
      }),
    )
}

/**
 * The CLI names the option at fault, scopes first; undefined when only the account id is refused
 * (empty, over 128 characters): such an id can name no account and is reported as one not found.
 */
function grantOptionProblem(errors: FieldError[]): string | undefined {
  const scopes = errors.find((e) => e.path === 'scopes')
  if (scopes) return `--scopes ${scopes.message}`
  if (errors.some((e) => e.path === 'expires_at')) return '--expires-at must be a future ISO 8601 time'
  return undefined
}
