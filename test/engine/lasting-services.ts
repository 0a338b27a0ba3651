// Set-ups of engine tests whose services share a database: one service stopped and started again on it (a
// restart), and two services on one PostgreSQL database (a cluster's leader and standby). Each registers its
// hooks in the suite that calls it.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before } from 'node:test'
import { startAnvil, type Anvil } from '../support/index.ts'
import { createFreshDatabaseUrl, dropDatabase } from '../support/database.ts'
import { seedEmbeddedDataDir } from '../support/pglite-template.ts'
import type { TestService } from '../support/service.ts'
import { startEngineService, waitFor, type EngineTestOptions } from './support.ts'

export interface RestartableServices {
  readonly anvil: Anvil
  /** A service on the one database (PostgreSQL when DATABASE_URL is set, else PGlite in one folder). */
  start(options?: EngineTestOptions): Promise<TestService>
  stop(service: TestService): Promise<void>
}

/** Services started one after the other on the same database, in front of one Anvil. */
export function useRestartableServices(): RestartableServices {
  let anvil: Anvil | undefined
  let databaseUrl: string | null = null
  const dataDir = mkdtempSync(join(tmpdir(), 'paywatch-restart-'))
  const running: TestService[] = []
  before(async () => {
    anvil = await startAnvil()
    databaseUrl = await createFreshDatabaseUrl()
    if (!databaseUrl) await seedEmbeddedDataDir(dataDir)
  })
  after(async () => {
    for (const service of running) await service.close()
    if (databaseUrl) await dropDatabase(databaseUrl)
    rmSync(dataDir, { recursive: true, force: true })
    await anvil?.stop()
  })
  return {
    get anvil() {
      return anvil!
    },
    async start(options = {}) {
      const env = { ...options.env, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : { PAYWATCH_DATA_DIR: dataDir }) }
      const service = await startEngineService(anvil!, { ...options, env })
      running.push(service)
      return service
    },
    async stop(service) {
      await service.close()
      running.splice(running.indexOf(service), 1)
    },
  }
}

export interface ServicePair {
  readonly anvil: Anvil
  /** The services still running. */
  readonly services: TestService[]
  /** Waits for one of them to follow the chain: it and the other. */
  roles(): Promise<{ leader: TestService; standby: TestService }>
}

/** Two services following `ethereum` on one fresh PostgreSQL database (DATABASE_URL must be set). */
export function useServicePair(): ServicePair {
  let anvil: Anvil | undefined
  let url: string | null = null
  const services: TestService[] = []
  before(async () => {
    anvil = await startAnvil()
    url = (await createFreshDatabaseUrl())!
    for (let i = 0; i < 2; i++) services.push(await startEngineService(anvil, { env: { DATABASE_URL: url } }))
  })
  after(async () => {
    for (const service of services) await service.close()
    if (url) await dropDatabase(url)
    await anvil?.stop()
  })
  const following = () => services.find((s) => s.engine.runner('ethereum')!.status === 'following')
  return {
    get anvil() {
      return anvil!
    },
    services,
    async roles() {
      const leader = await waitFor('one node to follow', async () => following())
      return { leader, standby: services.find((s) => s !== leader)! }
    },
  }
}
