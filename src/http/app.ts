import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify'
import type { Socket } from 'node:net'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { Logger } from 'pino'
import { Counter, Histogram } from 'prom-client'
import type { Common } from '../common/common.ts'
import type { ChainRegistry } from '../chain/registry.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { ReferenceCheck } from '../domain/reference-check.ts'
import type { TrackingEvents } from '../common/tracking-events.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { apiVersionOf } from './api-version.ts'
import type { ApiKeyAuth } from './auth.ts'
import type { AuthThrottle } from './auth-throttle.ts'
import { clientErrorHandler, frameworkErrorHandler, installErrorHandling } from './error-handler.ts'
import { installJsonBodyParser, installUrlGuard } from './input-guard.ts'
import { API_KEY_PROBLEMS, BODY_PROBLEMS, documentProblems, EVERY_ROUTE_PROBLEMS } from './problem-schemas.ts'
import type { RateLimits } from './rate-limit.ts'
import { adminRoutes } from './routes/admin.ts'
import { adminScope } from './admin-scope.ts'
import { homeRoutes } from './routes/home.ts'
import { healthRoutes } from './routes/health.ts'
import { type ChainReadiness } from '../common/readiness.ts'
import { paymentRoutes } from './routes/payments.ts'
import { documentRoute, finishDocument } from './openapi-document.ts'
import { addComponents, componentNames } from './openapi-components.ts'
import { webhooks } from './openapi-webhooks.ts'
import { docsHeaders, docsPage } from './docs-page.ts'

export const BODY_LIMIT = 64 * 1024

export interface AppDeps {
  common: Common
  db: Db
  chains: ChainRegistry
  events: TrackingEvents
  auth: ApiKeyAuth
  rateLimits: RateLimits
  authThrottle: AuthThrottle
  chainReadiness: () => Promise<ChainReadiness[]>
  referenceChecks?: ReferenceCheck[]
  decorateRecord?: (tracking: Tracking, body: string, reply: FastifyReply) => Promise<void>
  /** More routes behind API key auth and rate limits (later subsystems, tests). */
  apiPlugins?: FastifyPluginAsync[]
  /** More routes of the admin API (src/http/admin-scope.ts), of later subsystems and tests. */
  adminPlugins?: FastifyPluginAsync[]
  /** More routes outside API key auth and the admin API (public key, WebSocket). */
  publicPlugins?: FastifyPluginAsync[]
}

/** The HTTP API, ready for `inject()` or `listen()`. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const requestTimeoutMs = deps.common.config.requestTimeoutSec * 1000
  const routeWords = new Set<string>()
  const app = Fastify({
    loggerInstance: httpLogger(deps.common.logger, routeWords) as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT,
    // Per-request lines only when debugging: at thousands of requests a second they are the bottleneck.
    logController: new LogController({ disableRequestLogging: !['debug', 'trace'].includes(deps.common.config.logLevel) }),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // A request (headers and body) must arrive within this time, or it is answered 408 and the connection
    // closed: a client trickling bytes would otherwise hold a socket, and the shutdown, for ever.
    requestTimeout: requestTimeoutMs,
    http: { headersTimeout: requestTimeoutMs, connectionsCheckingInterval: checkEveryMs(requestTimeoutMs) } as object,
    routerOptions: { maxParamLength: 500 },
    ajv: { customOptions: { allErrors: true, coerceTypes: false } },
    // Malformed URLs and over-long path parameters are answered before routing: as problems too.
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  })
  collectRouteWords(app, routeWords)
  addComponents(app)
  app.addHook('onRoute', documentRoute)
  documentHookProblems(app)
  installErrorHandling(app)
  // Before every route's own authentication: an address over its failed attempts is refused unread.
  app.addHook('onRequest', async (request) => deps.authThrottle.check(request))
  app.addHook('onResponse', async (request, reply) => {
    if (reply.statusCode === 401) await deps.authThrottle.failed(request)
  })
  // JSON only: every other content type is a 415.
  app.removeAllContentTypeParsers()
  installJsonBodyParser(app, BODY_LIMIT)
  installUrlGuard(app)
  installHttpMetrics(app, deps.common)
  closeSlowSendersOnClose(app)

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Paywatch API',
        version: '2',
        description: 'Blockchain payment tracking',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: '/', description: 'this Paywatch node (the API is served at the root of its address)' }],
      tags: [
        { name: 'payments', description: 'Payment trackings, their release and callback deliveries' },
        { name: 'callbacks', description: 'Verifying callbacks' },
        { name: 'admin', description: 'Accounts, keys and integrations (admin token)' },
        { name: 'operations', description: 'Health, readiness and metrics' },
      ],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          adminToken: { type: 'http', scheme: 'bearer' },
          accessToken: { type: 'http', scheme: 'bearer' },
        },
      },
      security: [{ apiKey: [] }],
      webhooks,
    },
    refResolver: componentNames,
    transformObject: (documents) => finishDocument((documents as { openapiObject: Record<string, unknown> }).openapiObject),
  })
  await app.register(async (docs) => {
    docs.addHook('onSend', docsHeaders)
    await docs.register(swaggerUi, { routePrefix: '/docs', ...docsPage })
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

  await app.register(homeRoutes, { adminToken: deps.common.config.adminToken, chains: deps.chains.all().map((chain) => chain.config.name) })
  await app.register(healthRoutes, { db: deps.db, registry: deps.common.metrics.registry, chainReadiness: deps.chainReadiness })
  const accountRoutes: FastifyPluginAsync = (admin) =>
    adminRoutes(admin, {
      db: deps.db,
      clock: deps.common.clock,
      onKeyRevoked: deps.auth.forgetKey,
      onKeyCreated: deps.auth.forgetUnknown,
    })
  await app.register(adminScope(deps.common.config.adminToken, [accountRoutes, ...(deps.adminPlugins ?? [])]))
  for (const plugin of deps.publicPlugins ?? []) await app.register(plugin)

  const inFlight = new WeakMap<FastifyRequest, () => void>()
  await app.register(async (api) => {
    api.addHook('onRoute', (route) => documentProblems(route, API_KEY_PROBLEMS))
    api.addHook('onRequest', async (request, reply) => {
      const caller = await deps.auth.authenticate(request)
      apiVersionOf(request)
      const admitted = await deps.rateLimits.admit(caller.keyId)
      reply.headers(admitted.headers)
    })
    api.addHook('preValidation', async (request) => {
      const release = await deps.rateLimits.occupy(request.caller!.keyId)
      // The client may have gone while the slot was being taken: onRequestAbort has run already.
      if (request.raw.destroyed) release()
      else inFlight.set(request, release)
    })
    // The parallel slot is freed when the answer is sent or the client goes away.
    const release = async (request: FastifyRequest) => {
      inFlight.get(request)?.()
      inFlight.delete(request)
    }
    api.addHook('onResponse', release)
    api.addHook('onRequestAbort', release)
    await api.register(paymentRoutes, {
      db: deps.db,
      chains: deps.chains,
      events: deps.events,
      now: deps.common.clock,
      referenceChecks: deps.referenceChecks,
      decorateRecord: deps.decorateRecord,
    })
    for (const plugin of deps.apiPlugins ?? []) await api.register(plugin)
  })
  return app
}

/**
 * On close, connections that are still sending a request (headers or body) are cut off: the server
 * waits for requests in progress, and a client trickling bytes would hold the shutdown up to the
 * request time-out. Requests that have fully arrived are answered; WebSockets close their own way.
 */
function closeSlowSendersOnClose(app: FastifyInstance): void {
  const sockets = new Set<Socket>()
  const busy = new Set<Socket>()
  app.server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => {
      sockets.delete(socket)
      busy.delete(socket)
    })
  })
  app.addHook('onRequest', async (request, reply) => {
    const { raw } = request
    const markBusy = () => busy.add(raw.socket)
    if (raw.complete || request.headers.upgrade) markBusy()
    else raw.once('end', markBusy)
    if (!request.headers.upgrade) reply.raw.once('finish', () => busy.delete(raw.socket))
  })
  app.addHook('preClose', async () => {
    for (const socket of sockets) if (!busy.has(socket)) socket.destroy()
  })
}

/**
 * Every route's OpenAPI responses list the problems the app's hooks and parsers may answer it with, besides
 * the route's own (each route's schema): from the problem catalogue, so the document cannot name a code that
 * is not answered, nor miss one that is.
 */
function documentHookProblems(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const takesBody = [route.method].flat().some((method) => method === 'POST' || method === 'PUT' || method === 'PATCH')
    documentProblems(route, [...EVERY_ROUTE_PROBLEMS, ...(takesBody ? BODY_PROBLEMS : [])])
  })
}

/** How often Node looks for requests over their time: often enough that the limit holds to about a second. */
const checkEveryMs = (timeoutMs: number): number => Math.max(100, Math.min(1000, timeoutMs / 4))

/**
 * Request logs without secrets: only the literal words of the API's routes are logged as they are; every
 * other path segment (a secret_id, an id, anything a client typed) is cut to its first characters,
 * whatever the path's form (`//v2/payments/…`, a route that does not exist, percent-encoded).
 */
function httpLogger(logger: Logger, routeWords: Set<string>): Logger {
  return logger.child(
    {},
    {
      serializers: {
        req: (req: { method: string; url: string }) => ({ method: req.method, url: maskSecrets(req.url, routeWords) }),
      },
    },
  )
}

export function maskSecrets(url: string, routeWords: ReadonlySet<string>): string {
  const queryAt = url.indexOf('?')
  const path = queryAt < 0 ? url : url.slice(0, queryAt)
  // Query values are not logged at all, names only when they look like one (`after`, `secret_id`):
  // a client may put anything there, secrets included.
  const name = (pair: string) => {
    const text = pair.split('=')[0]!
    return /^[a-z_]{1,32}$/.test(text) ? text : `${text.slice(0, 4)}…`
  }
  const query =
    queryAt < 0
      ? ''
      : `?${url
          .slice(queryAt + 1)
          .split('&')
          .map((pair) => `${name(pair)}=…`)
          .join('&')}`
  const masked = path.split(/(?=[/\\])/).map((part) => {
    const word = part.replace(/^[/\\]/, '')
    return word === '' || routeWords.has(word) ? part : `${part.slice(0, part.length - word.length)}${shownPart(word)}…`
  })
  return masked.join('') + query
}

/**
 * What of a path segment a log line shows: its first 4 characters when at least 8 more stay hidden (a
 * UUID, a long id: enough to tell requests apart), nothing of a short one (a secret_id of a few
 * characters would otherwise be logged whole).
 */
const shownPart = (word: string): string => (word.length >= 12 ? word.slice(0, 4) : '')

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered, as `{method, url}` (tests walk them: every admin route refuses without the token). */
    registeredRoutes: ReadonlyArray<{ method: string; url: string }>
  }
}

/**
 * The literal path segments of every route (`v2`, `payments`, `deliveries`, …), as routes are added; and
 * the routes themselves, on the instance.
 */
function collectRouteWords(app: FastifyInstance, words: Set<string>): void {
  const routes: { method: string; url: string }[] = []
  app.decorate('registeredRoutes', routes)
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url })
    for (const word of route.url.split('/')) if (word !== '' && !word.includes(':') && !word.includes('*')) words.add(word)
  })
}

function installHttpMetrics(app: FastifyInstance, common: Common): void {
  const requests = new Counter({
    name: 'paywatch_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [common.metrics.registry],
  })
  const duration = new Histogram({
    name: 'paywatch_http_request_duration_seconds',
    help: 'HTTP request duration',
    labelNames: ['method', 'route'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
    registers: [common.metrics.registry],
  })
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unknown'
    requests.inc({ method: request.method, route, status: reply.statusCode })
    duration.observe({ method: request.method, route }, reply.elapsedTime / 1000)
  })
}
