import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync, type FastifyReply, type FastifyRequest } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { Logger } from 'pino'
import { Counter, Histogram } from 'prom-client'
import type { Common } from '../common.ts'
import type { ChainRegistry } from '../chain/registry.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { ReferenceCheck } from '../payments/create-payment.ts'
import type { TrackingEvents } from '../payments/events.ts'
import type { Db } from '../store/database.ts'
import { apiVersionOf } from './api-version.ts'
import type { ApiKeyAuth } from './auth.ts'
import { clientErrorHandler, frameworkErrorHandler, installErrorHandling } from './error-handler.ts'
import { installJsonBodyParser, installUrlGuard } from './input-guard.ts'
import type { RateLimits } from './rate-limit.ts'
import { adminRoutes } from './routes/admin.ts'
import { healthRoutes, type ChainReadiness } from './routes/health.ts'
import { paymentRoutes } from './routes/payments.ts'

export const BODY_LIMIT = 64 * 1024

export interface AppDeps {
  common: Common
  db: Db
  chains: ChainRegistry
  events: TrackingEvents
  auth: ApiKeyAuth
  rateLimits: RateLimits
  chainReadiness: () => Promise<ChainReadiness[]>
  referenceChecks?: ReferenceCheck[]
  decorateRecord?: (tracking: Tracking, body: string, reply: FastifyReply) => Promise<void>
  /** More routes behind API key auth and rate limits (later subsystems, tests). */
  apiPlugins?: FastifyPluginAsync[]
  /** More routes outside API key auth (admin routes of later subsystems, WebSocket). */
  publicPlugins?: FastifyPluginAsync[]
}

/** The HTTP API, ready for `inject()` or `listen()`. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: httpLogger(deps.common.logger) as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT,
    // Per-request lines only when debugging: at thousands of requests a second they are the bottleneck.
    logController: new LogController({ disableRequestLogging: !['debug', 'trace'].includes(deps.common.config.logLevel) }),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { maxParamLength: 500 },
    ajv: { customOptions: { allErrors: true, coerceTypes: false } },
    // Malformed URLs and over-long path parameters are answered before routing: as problems too.
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  })
  installErrorHandling(app)
  // JSON only: every other content type is a 415.
  app.removeAllContentTypeParsers()
  installJsonBodyParser(app, BODY_LIMIT)
  installUrlGuard(app)
  installHttpMetrics(app, deps.common)

  await app.register(swagger, {
    openapi: {
      info: { title: 'Paywatch API', version: '2', description: 'Blockchain payment tracking' },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          adminToken: { type: 'http', scheme: 'bearer' },
          accessToken: { type: 'http', scheme: 'bearer' },
        },
      },
      security: [{ apiKey: [] }],
    },
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

  await app.register(healthRoutes, { db: deps.db, registry: deps.common.metrics.registry, chainReadiness: deps.chainReadiness })
  await app.register(adminRoutes, {
    db: deps.db, clock: deps.common.clock, adminToken: deps.common.config.adminToken, onKeyRevoked: deps.auth.forgetKey,
  })
  for (const plugin of deps.publicPlugins ?? []) await app.register(plugin)

  const inFlight = new WeakMap<FastifyRequest, () => void>()
  await app.register(async (api) => {
    api.addHook('onRequest', async (request, reply) => {
      const caller = await deps.auth.authenticate(request)
      apiVersionOf(request)
      const admitted = await deps.rateLimits.admit(caller.keyId)
      reply.headers(admitted.headers)
      inFlight.set(request, admitted.done)
    })
    // The parallel slot is freed when the answer is sent or the client goes away.
    const release = async (request: FastifyRequest) => {
      inFlight.get(request)?.()
      inFlight.delete(request)
    }
    api.addHook('onResponse', release)
    api.addHook('onRequestAbort', release)
    await api.register(paymentRoutes, {
      db: deps.db, chains: deps.chains, events: deps.events, now: deps.common.clock,
      referenceChecks: deps.referenceChecks, decorateRecord: deps.decorateRecord,
    })
    for (const plugin of deps.apiPlugins ?? []) await api.register(plugin)
  })
  return app
}

/** Request logs without secrets: the secret_id in a payment path is cut to its first characters. */
function httpLogger(logger: Logger): Logger {
  return logger.child({}, {
    serializers: {
      req: (req: { method: string; url: string }) => ({ method: req.method, url: maskSecrets(req.url) }),
    },
  })
}

export function maskSecrets(url: string): string {
  const queryAt = url.indexOf('?')
  const path = queryAt < 0 ? url : url.slice(0, queryAt)
  // Query values are not logged at all: a client may put anything there, secrets included.
  const query = queryAt < 0 ? '' : `?${url.slice(queryAt + 1).split('&').map((pair) => `${pair.split('=')[0]}=…`).join('&')}`
  return path.replace(/^(\/v2\/payments\/)(?!release\b|shopify\/)([^/?]{4})[^/?]*/, '$1$2…') + query
}

function installHttpMetrics(app: FastifyInstance, common: Common): void {
  const requests = new Counter({
    name: 'paywatch_http_requests_total', help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'], registers: [common.metrics.registry],
  })
  const duration = new Histogram({
    name: 'paywatch_http_request_duration_seconds', help: 'HTTP request duration',
    labelNames: ['method', 'route'], buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
    registers: [common.metrics.registry],
  })
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unknown'
    requests.inc({ method: request.method, route, status: reply.statusCode })
    duration.observe({ method: request.method, route }, reply.elapsedTime / 1000)
  })
}
