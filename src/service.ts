import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import type { Logger } from 'pino'
import { createLogger } from './common/logger.ts'
import { createMetrics } from './common/metrics.ts'
import { createShutdown } from './common/shutdown.ts'
import { systemClock, type Clock } from './common/clock.ts'
import { type Common } from './common/common.ts'
import { decorateRecordOf, readinessOf, startSubsystems, type DecorateRecord, type Subsystem } from './common/subsystem.ts'
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
import { withCallbackRoutes } from './http/routes/callback-routes.ts'
import { chainDataSubsystem } from './http/routes/chain-data.ts'
import { accountDataSubsystem } from './http/routes/account-data.ts'
import { createRateLimits } from './http/rate-limit.ts'
import { createAuthThrottle } from './http/auth-throttle.ts'
import { createTrackingEvents, type TrackingEvents } from './common/tracking-events.ts'
import { openDatabase, type DatabaseHandle } from './store/infrastructure/database.ts'
import { createDashboard } from './dashboard/dashboard.ts'
import { missingSetup } from './config/missing-setup.ts'
import { createTokenSymbols } from './chain/token-symbols.ts'
import { generateRsaKeyPair } from './callbacks/signer.ts'
import { migrate } from './store/infrastructure/migrate.ts'
import { createEmbeddedStatistics } from './store/infrastructure/embedded-statistics.ts'

export interface ServiceOptions {
  clock?: Clock
  logger?: Logger
  /** false: no chain followers or workers (CLI commands, tests of the API alone). */
  background?: boolean
  /** Route and hook additions for tests. */
  app?: Partial<Pick<AppDeps, 'apiPlugins' | 'adminPlugins' | 'publicPlugins' | 'referenceChecks'>>
  /** Widget channel timing (tests tick the pings by hand). */
  cable?: CableOptions
  /** Callback delivery tuning for tests (random source, poll interval, concurrency). */
  callbacks?: CallbacksOptions
  /** Sees the SQL of every database query (tests count queries). */
  onQuery?: (sql: string) => void
  /** Start from an empty embedded database (`paywatch dev`: its Anvil chain is new each time). */
  freshDatabase?: boolean
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
 * Assembles Paywatch: database (migrated), chains, then a list of subsystems (src/common/subsystem.ts)
 * whose routes and create-time checks make the HTTP API and whose background work starts, in list
 * order, once the API is ready. Every subsystem receives the same `common` and registers its clean-up
 * with `common.shutdown`.
 */
export async function createService(config: Config, options: ServiceOptions = {}): Promise<Service> {
  const logger = options.logger ?? createLogger(config.logLevel)
  const shutdown = createShutdown(logger)
  const common: Common = { config, logger, metrics: createMetrics({ defaultMetrics: true }), clock: options.clock ?? systemClock, shutdown }
  try {
    const database = await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      preparedStatements: config.preparedStatements,
      embeddedSharedBuffersMb: config.embeddedSharedBuffersMb,
      onQuery: options.onQuery,
      fresh: options.freshDatabase,
    })
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
    const db = database.db

    // The subsystems, in the order their routes are registered and their background work starts.
    const callbacks = await createCallbacks(common, database, events, options.callbacks)
    const rpcReadiness = createRpcReadiness(chains, common.clock)
    const engine = createChainEngine(common, { database, chains, events, fallbackReadiness: rpcReadiness, deliveries: callbacks.handoff })
    const authThrottle = createAuthThrottle(config.authFailures, redis, common.clock)
    let decorate: DecorateRecord | undefined
    // Bound once the list is complete: the release route, in the list, answers with signed records too.
    const decorateRecord: DecorateRecord = (tracking, body, reply) => decorate?.(tracking, body, reply) ?? Promise.resolve()
    const subsystems: Subsystem[] = [
      {
        name: 'test additions',
        apiRoutes: options.app?.apiPlugins,
        adminRoutes: options.app?.adminPlugins,
        publicRoutes: options.app?.publicPlugins,
        referenceChecks: options.app?.referenceChecks,
      },
      // Links, shops and apps; assets and prices (docs/api.md §5).
      accountDataSubsystem({ db, clock: common.clock }),
      chainDataSubsystem(common, chains),
      // Release endpoint, signed callbacks and the widget channel (docs/api.md §4).
      {
        name: 'release',
        apiRoutes: [
          releaseRoutes({
            db,
            events,
            now: common.clock,
            isTrackedChain: (name) => chains.get(name) !== undefined,
            decorateRecord,
          }),
        ],
      },
      withCallbackRoutes(common, db, callbacks),
      createCable(common, { database, events }, options.cable),
      // The embedded database's planner statistics, which PostgreSQL's autovacuum keeps on a server; before the engine, whose plans need them.
      ...(database.kind === 'pglite'
        ? [
            {
              name: 'embedded statistics',
              ...createEmbeddedStatistics({ db, logger, quietMoment: (maxWaitMs) => engine.quietMoment(maxWaitMs) }),
            },
          ]
        : []),
      // Chain tracking engine (docs/api.md §3): followers, matching, fast path, time-outs. Without
      // background work it follows nothing, and /readyz probes the RPC instead.
      {
        name: 'chain engine',
        start: () => engine.start(),
        stop: () => engine.stop(),
        readiness: options.background === false ? rpcReadiness : () => engine.readiness(),
      },
      // The operator dashboard (docs/operations.md): pages over the admin use cases, live from the event bus.
      createDashboard({
        db,
        clock: common.clock,
        adminToken: config.adminToken,
        events,
        chainNames: chains.all().map((chain) => chain.config.name),
        chainReadiness: () => readinessOf(subsystems),
        authThrottle,
        generateKeyPair: generateRsaKeyPair,
        secretsKey: config.secretsKey,
        // A redelivery or an endpoint enabled from the dashboard: the worker reads the endpoints again and claims.
        onDeliveryScheduled: () => callbacks.worker.endpointsChanged(),
        sendTestEvent: callbacks.sendTestEvent,
        onKeyRevoked: auth.forgetKey,
        onKeyCreated: auth.forgetUnknown,
        tokenSymbol: createTokenSymbols(chains),
      }),
    ]
    decorate = decorateRecordOf(subsystems)

    const app = await buildApp({
      common,
      db,
      chains,
      events,
      auth,
      rateLimits: createRateLimits(config.rate, redis),
      authThrottle,
      chainReadiness: () => readinessOf(subsystems),
      apiPlugins: subsystems.flatMap((subsystem) => subsystem.apiRoutes ?? []),
      adminPlugins: subsystems.flatMap((subsystem) => subsystem.adminRoutes ?? []),
      publicPlugins: subsystems.flatMap((subsystem) => subsystem.publicRoutes ?? []),
      referenceChecks: subsystems.flatMap((subsystem) => subsystem.referenceChecks ?? []),
      decorateRecord,
    })
    await app.ready()
    if (options.background !== false) await startSubsystems(subsystems, shutdown, logger)
    // Registered last so it runs first: stop taking requests before stopping the work behind them.
    shutdown.add('http', () => app.close())

    return {
      common,
      database,
      chains,
      events,
      app,
      redis,
      callbacks,
      engine,
      async listen() {
        const address = await app.listen({ port: config.port, host: config.host })
        const tracked = chains.all().map((c) => c.config.name)
        logger.info({ address, database: database.kind, chains: tracked }, 'paywatch listening')
        for (const missing of missingSetup(config, tracked)) logger.warn({ setting: missing.variable }, missing.message)
        return address
      },
      close: () => shutdown.run(),
    }
  } catch (error) {
    await shutdown.run()
    throw error
  }
}
