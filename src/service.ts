import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import { Redis } from 'ioredis'
import type { Logger } from 'pino'
import { createLogger } from './common/logger.ts'
import { createMetrics } from './common/metrics.ts'
import { createShutdown } from './common/shutdown.ts'
import { systemClock, type Clock } from './common/clock.ts'
import { type Common } from './common/common.ts'
import type { Config } from './config/config.ts'
import { createChainRegistry, type ChainRegistry } from './chain/registry.ts'
import { createRpcReadiness } from './engine/rpc-readiness.ts'
import { closeRpcSockets } from './chain/rpc-client.ts'
import { createChainEngine, type ChainEngine } from './engine/chain-engine.ts'
import { buildApp, type AppDeps } from './http/app.ts'
import { createCable, type CableOptions } from './cable/cable.ts'
import { releaseRoutes } from './http/routes/release.ts'
import { createApiKeyAuth } from './http/auth.ts'
import { createCallbacks, type Callbacks, type CallbacksOptions } from './callbacks/index.ts'
import { callbackRoutes } from './http/routes/callback-routes.ts'
import { chainDataPlugins } from './http/routes/chain-data.ts'
import { accountDataPlugins } from './http/routes/account-data.ts'
import { linkAndShopChecks } from './payments/link-shop-checks.ts'
import { createRateLimits } from './http/rate-limit.ts'
import { createAuthThrottle } from './http/auth-throttle.ts'
import type { ReferenceCheck } from './domain/reference-check.ts'
import { createTrackingEvents, type TrackingEvents } from './common/tracking-events.ts'
import { openDatabase, type DatabaseHandle } from './store/database.ts'
import { migrate } from './store/migrate.ts'

export interface ServiceOptions {
  clock?: Clock
  logger?: Logger
  /** false: no chain followers or workers (CLI commands, tests of the API alone). */
  background?: boolean
  /** Route and hook additions for tests. */
  app?: Partial<Pick<AppDeps, 'apiPlugins' | 'publicPlugins' | 'referenceChecks'>>
  /** Widget channel timing (tests tick the pings by hand). */
  cable?: CableOptions
  /** Callback delivery tuning for tests (random source, poll interval, concurrency). */
  callbacks?: CallbacksOptions
  /** Sees the SQL of every database query (tests count queries). */
  onQuery?: (sql: string) => void
}

export interface Service {
  common: Common
  database: DatabaseHandle
  chains: ChainRegistry
  events: TrackingEvents
  app: FastifyInstance
  redis: Redis | undefined
  /** Signing keys and the callback delivery worker (tests drive it with `runOnce`). */
  callbacks: Callbacks
  /** The chain tracking engine (tests drive it: syncNow, sweep, check). */
  engine: ChainEngine
  /** Starts listening on the configured host and port; returns the address. */
  listen(): Promise<string>
  /** Stops everything in reverse order of start (also on SIGTERM). */
  close(): Promise<void>
}

/**
 * Assembles Paywatch: database (migrated), chains, HTTP API and background work. Every subsystem
 * receives the same `common` and registers its clean-up with `common.shutdown`.
 */
export async function createService(config: Config, options: ServiceOptions = {}): Promise<Service> {
  const logger = options.logger ?? createLogger(config.logLevel)
  const shutdown = createShutdown(logger)
  const common: Common = { config, logger, metrics: createMetrics({ defaultMetrics: true }), clock: options.clock ?? systemClock, shutdown }
  try {
    const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, preparedStatements: config.preparedStatements, onQuery: options.onQuery })
    shutdown.add('database', () => database.close())
    const applied = await migrate(database.db)
    if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated')

    const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 2, lazyConnect: false }) : undefined
    if (redis) {
      redis.on('error', (error) => logger.warn({ err: error }, 'redis error'))
      shutdown.add('redis', async () => void (await redis.quit().catch(() => redis.disconnect())))
    }

    const chains = createChainRegistry(common)
    shutdown.add('rpc sockets', () => closeRpcSockets(chains.all().flatMap((chain) => chain.config.rpc)))
    await chains.verify()
    const events = createTrackingEvents()
    const auth = createApiKeyAuth(database.db, common.clock)

    // Subsystems add their routes, create-time checks and background work here, in this order.
    const apiPlugins: FastifyPluginAsync[] = [...(options.app?.apiPlugins ?? [])]
    const publicPlugins: FastifyPluginAsync[] = [...(options.app?.publicPlugins ?? [])]
    const referenceChecks: ReferenceCheck[] = [...(options.app?.referenceChecks ?? [])]
    let decorateRecord: AppDeps['decorateRecord']
    /** Started once the HTTP API is ready; each registers its own stop with `common.shutdown`. */
    const background: { name: string; start: () => Promise<void> }[] = []
    // Links, shops and apps (issue 5).
    const accountData = accountDataPlugins({ db: database.db, clock: common.clock, adminToken: config.adminToken })
    publicPlugins.push(accountData.admin)
    apiPlugins.push(accountData.api)
    referenceChecks.push(linkAndShopChecks(database.db))
    // Assets and prices (issue 6).
    apiPlugins.push(...chainDataPlugins(common, chains))

    // Release endpoint and widget channel (issue 4).
    apiPlugins.push(releaseRoutes({
      db: database.db, events, now: common.clock, isTrackedChain: (name) => chains.get(name) !== undefined,
      decorateRecord: (tracking, body, reply) => decorateRecord?.(tracking, body, reply) ?? Promise.resolve(),
    }))
    // Signed callbacks: keys, delivery workers, integrations, operator tools, SSRF guard (issue 4).
    const callbacks = await createCallbacks(common, database, events, options.callbacks)
    const callbackPlugins = callbackRoutes(common, database.db, callbacks)
    apiPlugins.push(...callbackPlugins.api)
    publicPlugins.push(...callbackPlugins.public)
    referenceChecks.push(...callbacks.referenceChecks)
    decorateRecord = callbacks.decorateRecord
    background.push(callbacks.background)
    const cable = createCable(common, { database, events }, options.cable)
    publicPlugins.push(cable.plugin)
    background.push({ name: 'cable relay', start: cable.start })

    // Chain tracking engine (issue 3): followers, matching, fast path, time-outs.
    const rpcReadiness = createRpcReadiness(chains, common.clock)
    const engine = createChainEngine(common, { database, chains, events, fallbackReadiness: rpcReadiness })
    background.push({
      name: 'chain engine',
      async start() {
        await engine.start()
        shutdown.add('chain engine', () => engine.stop())
      },
    })

    const app = await buildApp({
      common,
      db: database.db,
      chains,
      events,
      auth,
      rateLimits: createRateLimits(config.rate, redis),
      authThrottle: createAuthThrottle(config.authFailures, redis, common.clock),
      chainReadiness: options.background === false ? rpcReadiness : engine.readiness,
      apiPlugins,
      publicPlugins,
      referenceChecks,
      decorateRecord: (tracking, body, reply) => decorateRecord?.(tracking, body, reply) ?? Promise.resolve(),
    })
    await app.ready()
    if (options.background !== false) {
      for (const task of background) {
        await task.start()
        logger.debug({ task: task.name }, 'background task started')
      }
    }
    // Registered last so it runs first: stop taking requests before stopping the work behind them.
    shutdown.add('http', () => app.close())

    return {
      common, database, chains, events, app, redis, callbacks, engine,
      async listen() {
        const address = await app.listen({ port: config.port, host: config.host })
        logger.info({ address, database: database.kind, chains: chains.all().map((c) => c.config.name) }, 'paywatch listening')
        return address
      },
      close: () => shutdown.run(),
    }
  } catch (error) {
    await shutdown.run()
    throw error
  }
}
