import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import pino from 'pino'
import { loadConfig, type Config } from '../../src/config/config.ts'
import { createService, type Service, type ServiceOptions } from '../../src/service.ts'
import { dropDatabase, createFreshDatabaseUrl } from './database.ts'
import { seedEmbeddedDataDir } from './pglite-template.ts'

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef'

export interface TestService extends Service {
  config: Config
  /** Creates an account and an API key through the admin API. */
  newAccount(name?: string): Promise<{ accountId: string; apiKey: string }>
  /** inject() with JSON body and the given API key. */
  api(apiKey: string, options: InjectOptions): Promise<LightMyRequestResponse>
  admin(options: InjectOptions): Promise<LightMyRequestResponse>
}

export interface TestServiceOptions extends ServiceOptions {
  /** Environment variables as the operator would set them (DATABASE_URL is managed here). */
  env?: Record<string, string>
  /** `chains` section of the config file, e.g. `{ ethereum: { rpc: [anvil.rpcUrl], chainId: 31337 } }`. */
  chains?: Record<string, unknown>
}

/**
 * The real service, configured as an operator would, on a fresh database: a new database on the
 * DATABASE_URL server when set (dropped on close), else an embedded one in a temporary folder.
 */
export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'paywatch-test-'))
  const databaseUrl = await createFreshDatabaseUrl()
  const env: Record<string, string> = {
    PAYWATCH_DATA_DIR: dataDir,
    PAYWATCH_ADMIN_TOKEN: ADMIN_TOKEN,
    PAYWATCH_ALLOW_PRIVATE_CALLBACKS: 'true',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    PORT: '0',
    // Inject() requests all come from 127.0.0.1 and a shared Redis outlives one test: the tests of the
    // failed-authentication throttle set their own limit and client addresses.
    PAYWATCH_AUTH_FAILURES: '1000000',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...options.env,
  }
  if (options.chains) {
    const file = join(dataDir, 'config.json')
    await import('node:fs/promises').then((fs) => fs.writeFile(file, JSON.stringify({ chains: options.chains })))
    env.PAYWATCH_CONFIG = file
  }
  if (!databaseUrl && env.PAYWATCH_DATA_DIR === dataDir) await seedEmbeddedDataDir(dataDir)
  const config = loadConfig(env)
  const service = await createService(config, { logger: pino({ level: config.logLevel }), ...options })
  const close = service.close
  const test: TestService = Object.assign(service, {
    config,
    async close() {
      await close()
      if (databaseUrl) await dropDatabase(databaseUrl)
      rmSync(dataDir, { recursive: true, force: true })
    },
    async newAccount(name = 'test account') {
      const account = await test.admin({ method: 'POST', url: '/admin/accounts', payload: { name } })
      const accountId = account.json<{ id: string }>().id
      const key = await test.admin({ method: 'POST', url: `/admin/accounts/${accountId}/api-keys` })
      return { accountId, apiKey: key.json<{ key: string }>().key }
    },
    api(apiKey: string, inject: InjectOptions) {
      return service.app.inject({ ...inject, headers: { 'x-api-key': apiKey, ...inject.headers } })
    },
    admin(inject: InjectOptions) {
      return service.app.inject({ ...inject, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...inject.headers } })
    },
  })
  return test
}
