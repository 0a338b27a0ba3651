import type { Command } from 'commander'
import pino from 'pino'
import { enableEndpoint, listAllEndpoints, listEndpoints, recoverEndpoint, testEndpoint } from '../admin/endpoints.ts'
import { accountEndpointJson, endpointJson } from '../admin/records.ts'
import { rotateAccountWebhookSecret } from '../admin/webhook-secrets.ts'
import { createCallbackSender } from '../callbacks/sender.ts'
import { createCallbackSigner } from '../callbacks/signer.ts'
import { createTestEventSender } from '../callbacks/test-event.ts'
import { createWebhookSecretSource } from '../callbacks/webhook-secret-source.ts'
import { systemClock, type Clock } from '../common/clock.ts'
import type { Config } from '../config/config.ts'
import { parseIsoTimestamp } from '../domain/iso-timestamp.ts'
import { sealStoredSigningKeys, sealStoredWebhookSecrets } from '../store/stored-key-sealing.ts'
import { withDatabase } from './with-database.ts'

const print = (value: unknown) => console.log(JSON.stringify(value, null, 2))

/** What an endpoint operation answered when it named no endpoint of the account. */
function endpointError(outcome: { kind: string; what?: string; message?: string }, accountId: string, url: string): Error {
  if (outcome.kind === 'invalid-url') return new Error(`${url} is not an absolute http(s) URL`)
  if (outcome.kind === 'refused') return new Error(`${url} may not be called back: ${outcome.message}`)
  if (outcome.what === 'account') return new Error(`no account ${accountId}`)
  return new Error(`no endpoint ${url} of account ${accountId}`)
}

/**
 * The account's Standard Webhooks secret and callback endpoints without HTTP (docs/api.md §8), over the
 * admin use cases the admin API uses. Deliveries released or recovered here are picked up by the running
 * service's workers within their poll interval.
 */
export function registerEndpointCommands(program: Command, config: () => Config, clock: Clock = systemClock): void {
  program
    .command('webhook-secret <accountId>')
    .description("create or rotate the account's webhook secret (callbacks without an integration); prints it once")
    .action(async (accountId: string) => {
      const { secretsKey } = config()
      await withDatabase(config(), async (db) => {
        // A missing or wrong PAYWATCH_SECRETS_KEY stops here, before a secret sealed with it is stored.
        await sealStoredSigningKeys(db, secretsKey)
        await sealStoredWebhookSecrets(db, secretsKey)
        const rotated = await rotateAccountWebhookSecret({ db, clock, secretsKey }, accountId)
        if (rotated.kind !== 'rotated') throw new Error(`account ${accountId} not found`)
        print({ webhook_secret: rotated.webhookSecret })
      })
    })

  const endpoints = program.command('endpoints').description('callback endpoints: health, enable, recover, test')
  endpoints
    .command('list [accountId]')
    .description("an account's endpoints, or every account's")
    .action(async (accountId?: string) => {
      await withDatabase(config(), async (db) => {
        if (accountId === undefined) return print((await listAllEndpoints({ db })).endpoints.map(accountEndpointJson))
        const listed = await listEndpoints({ db }, accountId)
        if (listed.kind !== 'listed') throw new Error(`account ${accountId} not found`)
        print(listed.endpoints.map(endpointJson))
      })
    })
  endpoints
    .command('enable <accountId> <url>')
    .description('enable an endpoint; its waiting deliveries go out')
    .action(async (accountId: string, url: string) => {
      await withDatabase(config(), async (db) => {
        const outcome = await enableEndpoint({ db, clock }, accountId, url)
        if (outcome.kind !== 'enabled') throw endpointError(outcome, accountId, url)
        print(endpointJson(outcome.endpoint))
      })
    })
  endpoints
    .command('recover <accountId> <url>')
    .description('send again every delivery to the endpoint whose last attempt failed, or that died, since --since')
    .requiredOption('--since <iso>', 'ISO 8601 timestamp')
    .action(async (accountId: string, url: string, options: { since: string }) => {
      const since = parseIsoTimestamp(options.since)
      if (!since) throw new Error('--since must be an ISO 8601 timestamp such as 2026-01-01T00:00:00Z')
      await withDatabase(config(), async (db) => {
        const outcome = await recoverEndpoint({ db, clock }, accountId, url, since)
        if (outcome.kind !== 'recovered') throw endpointError(outcome, accountId, url)
        print({ redelivered: outcome.redelivered })
      })
    })
  endpoints
    .command('test <accountId> <url>')
    .description('send one signed test event to the url and print its answer')
    .action(async (accountId: string, url: string) => {
      const settings = config()
      await withDatabase(settings, async (db) => {
        await sealStoredSigningKeys(db, settings.secretsKey)
        const sender = createCallbackSender({ timeoutMs: settings.callbackTimeoutSec * 1000, allowPrivate: settings.allowPrivateCallbacks })
        try {
          const send = createTestEventSender({
            signer: await createCallbackSigner(db, settings.signingKey, settings.secretsKey),
            // One event from a one-off process: no worker, no other attempts to share the endpoint's limit with.
            attempt: (_account, target, body, headersAt) => sender.send(target, body, headersAt(clock())),
            secrets: createWebhookSecretSource(db, clock, settings.secretsKey),
            clock,
            logger: pino({ level: 'silent' }),
            allowPrivate: settings.allowPrivateCallbacks,
          })
          let answer: Promise<{ statusCode: number | null; error: string | null }> | undefined
          const outcome = await testEndpoint(
            {
              db,
              clock,
              sendTestEvent: async (account, target) => {
                const sent = await send(account, target)
                if (sent.kind === 'sent') answer = sent.answer
                return sent
              },
            },
            accountId,
            url,
          )
          if (outcome.kind !== 'sent') throw endpointError(outcome, accountId, url)
          const result = await answer!
          print({ id: outcome.id, status: result.statusCode, error: result.error })
        } finally {
          sender.close()
        }
      })
    })
}
