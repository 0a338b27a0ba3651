import type { Command } from 'commander'
import { generateRsaKeyPair } from '../callbacks/signer.ts'
import type { Config } from '../config/config.ts'
import { attemptJson, deliveryJson } from '../http/routes/deliveries.ts'
import { integrationJson } from '../http/routes/admin-integrations.ts'
import { listDeliveries, redeliver } from '../store/deliveries.ts'
import { createIntegration, findIntegration, listIntegrations } from '../store/integrations.ts'
import { sealStoredSigningKeys } from '../store/stored-key-sealing.ts'
import { findTrackingBySecret } from '../store/trackings.ts'
import { requireAccount, withDatabase } from './with-database.ts'

const print = (value: unknown) => console.log(JSON.stringify(value, null, 2))

/**
 * Integrations (callback-signing keys) and callback deliveries without HTTP. A redelivery made here
 * is picked up by the running service's workers within their poll interval.
 */
export function registerCallbackCommands(program: Command, config: () => Config): void {
  const integrations = program.command('integrations').description('manage integrations (each signs its callbacks with its own key)')
  integrations.command('create <accountId>')
    .description('create an integration; prints its id and public key')
    .option('--name <name>', 'a name for operators')
    .action(async (accountId: string, options: { name?: string }) => {
      const { secretsKey } = config()
      await withDatabase(config(), async (db) => {
        await requireAccount(db, accountId)
        // As at the service's start: a missing or wrong PAYWATCH_SECRETS_KEY stops here, before a key sealed with it is stored.
        await sealStoredSigningKeys(db, secretsKey)
        print(integrationJson(await createIntegration(db, accountId, options.name ?? null, await generateRsaKeyPair(), secretsKey)))
      })
    })
  integrations.command('show <integrationId>')
    .description('show an integration and its public key')
    .option('--pem', 'print only the public key (SPKI PEM)')
    .action(async (integrationId: string, options: { pem?: boolean }) => {
      await withDatabase(config(), async (db) => {
        const integration = await findIntegration(db, integrationId)
        if (!integration) throw new Error(`integration ${integrationId} not found`)
        if (options.pem) process.stdout.write(integration.publicKeyPem)
        else print(integrationJson(integration))
      })
    })
  integrations.command('list <accountId>').description("list an account's integrations").action(async (accountId: string) => {
    await withDatabase(config(), async (db) => {
      await requireAccount(db, accountId)
      print((await listIntegrations(db, accountId)).map(integrationJson))
    })
  })

  const deliveries = program.command('deliveries').description('inspect and repeat callback deliveries')
  const trackingOf = async (db: Parameters<Parameters<typeof withDatabase>[1]>[0], secretId: string, accountId: string) => {
    const tracking = await findTrackingBySecret(db, accountId, secretId)
    if (!tracking) throw new Error('payment tracking not found for this account')
    return tracking
  }
  deliveries.command('list <secretId>')
    .description("a payment's callback deliveries with their attempt log")
    .requiredOption('--account <accountId>', 'the account that owns the payment')
    .action(async (secretId: string, options: { account: string }) => {
      await withDatabase(config(), async (db) => {
        const tracking = await trackingOf(db, secretId, options.account)
        print((await listDeliveries(db, tracking.id)).map((d) => ({ ...deliveryJson(d), attempts: d.attemptLog.map(attemptJson) })))
      })
    })
  deliveries.command('redeliver <secretId>')
    .description("send a completed payment's callback again (a waiting retry is brought forward)")
    .requiredOption('--account <accountId>', 'the account that owns the payment')
    .action(async (secretId: string, options: { account: string }) => {
      await withDatabase(config(), async (db) => {
        const tracking = await trackingOf(db, secretId, options.account)
        const outcome = await redeliver(db, tracking.id, new Date())
        if (outcome.kind === 'pending') throw new Error('the payment is still pending: its callback is sent when it completes')
        if (outcome.kind === 'no-callback') throw new Error('the payment has no callback URL')
        if (outcome.kind === 'not-found') throw new Error('payment tracking not found')
        print(deliveryJson(outcome.delivery))
      })
    })
}
