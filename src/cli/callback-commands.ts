import type { Command } from 'commander'
import { listPaymentDeliveries, redeliverCallback } from '../admin/deliveries.ts'
import { createIntegration, listIntegrations, showIntegration } from '../admin/integrations.ts'
import { deliveryJson, deliveryWithAttemptsJson, integrationJson } from '../admin/records.ts'
import { generateRsaKeyPair } from '../callbacks/signer.ts'
import { systemClock, type Clock } from '../common/clock.ts'
import type { Config } from '../config/config.ts'
import { withDatabase } from './with-database.ts'

const print = (value: unknown) => console.log(JSON.stringify(value, null, 2))

/**
 * Integrations (callback-signing keys) and callback deliveries without HTTP. A redelivery made here
 * is picked up by the running service's workers within their poll interval.
 */
export function registerCallbackCommands(program: Command, config: () => Config, clock: Clock = systemClock): void {
  const integrations = program.command('integrations').description('manage integrations (each signs its callbacks with its own key)')
  integrations
    .command('create <accountId>')
    .description('create an integration; prints its id, public key and webhook secret (shown only here)')
    .option('--name <name>', 'a name for operators')
    .option('--reversal-events', 'send payment.reverted / payment.reconfirmed callbacks for its trackings')
    .action(async (accountId: string, options: { name?: string; reversalEvents?: boolean }) => {
      const { secretsKey } = config()
      await withDatabase(config(), async (db) => {
        // As at the service's start: a missing or wrong PAYWATCH_SECRETS_KEY stops here, before a key sealed with it is stored.
        const created = await createIntegration(
          { db, clock, generateKeyPair: generateRsaKeyPair, secretsKey, checkStoredKeys: true },
          accountId,
          options.name ?? null,
          { reversalEvents: options.reversalEvents === true },
        )
        if (created.kind !== 'created') throw new Error(`account ${accountId} not found`)
        print({ ...integrationJson(created.integration), webhook_secret: created.webhookSecret })
      })
    })
  integrations
    .command('show <integrationId>')
    .description('show an integration and its public key')
    .option('--pem', 'print only the public key (SPKI PEM)')
    .action(async (integrationId: string, options: { pem?: boolean }) => {
      await withDatabase(config(), async (db) => {
        const shown = await showIntegration({ db }, integrationId)
        if (shown.kind !== 'found') throw new Error(`integration ${integrationId} not found`)
        if (options.pem) process.stdout.write(shown.integration.publicKeyPem)
        else print(integrationJson(shown.integration))
      })
    })
  integrations
    .command('list <accountId>')
    .description("list an account's integrations")
    .action(async (accountId: string) => {
      await withDatabase(config(), async (db) => {
        const listed = await listIntegrations({ db }, accountId)
        if (listed.kind !== 'listed') throw new Error(`account ${accountId} not found`)
        print(listed.integrations.map(integrationJson))
      })
    })

  const deliveries = program.command('deliveries').description('inspect and repeat callback deliveries')
  const noSuchPayment = () => new Error('payment tracking not found for this account')
  deliveries
    .command('list <secretId>')
    .description("a payment's callback deliveries with their attempt log")
    .requiredOption('--account <accountId>', 'the account that owns the payment')
    .action(async (secretId: string, options: { account: string }) => {
      await withDatabase(config(), async (db) => {
        const listed = await listPaymentDeliveries({ db }, options.account, secretId)
        if (listed.kind !== 'listed') throw noSuchPayment()
        print(listed.deliveries.map(deliveryWithAttemptsJson))
      })
    })
  deliveries
    .command('redeliver <secretId>')
    .description("send a completed payment's callback again (a waiting retry is brought forward)")
    .requiredOption('--account <accountId>', 'the account that owns the payment')
    .action(async (secretId: string, options: { account: string }) => {
      await withDatabase(config(), async (db) => {
        const outcome = await redeliverCallback({ db, clock }, options.account, secretId, 'cli')
        if (outcome.kind === 'not-found') throw outcome.vanished ? new Error('payment tracking not found') : noSuchPayment()
        if (outcome.kind === 'pending') throw new Error('the payment is still pending: its callback is sent when it completes')
        if (outcome.kind === 'no-callback') throw new Error('the payment has no callback URL')
        print(deliveryJson(outcome.delivery))
      })
    })
}
