import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import type { Registry } from 'prom-client'
import type { Db } from '../../store/infrastructure/database.ts'
import type { ChainReadiness } from '../../common/readiness.ts'

export interface HealthRoutesDeps {
  db: Db
  registry: Registry
  /** Each tracked chain's state; the chain engine reports head ages, else the RPC is asked for its head. */
  chainReadiness: () => Promise<ChainReadiness[]>
}

const liveness = Type.Object({ status: Type.Literal('ok') })
/** Open: each chain's entry is the engine's own report (docs/api.md §6), serialized as it is. */
const readiness = Type.Object(
  {
    status: Type.Union([Type.Literal('ready'), Type.Literal('not ready')]),
    database: Type.Object({ ok: Type.Boolean(), error: Type.Optional(Type.String()) }, { additionalProperties: true }),
    chains: Type.Array(Type.Object({ ok: Type.Boolean() }, { additionalProperties: true })),
  },
  { additionalProperties: true },
)

export async function healthRoutes(app: FastifyInstance, deps: HealthRoutesDeps): Promise<void> {
  app.get('/healthz', { schema: { summary: 'Liveness', tags: ['operations'], security: [], response: { 200: liveness } } }, async () => ({
    status: 'ok',
  }))

  const readyzSchema = {
    summary: 'Readiness: database and each chain',
    tags: ['operations'],
    security: [],
    response: { 200: readiness, 503: readiness },
  }
  app.get('/readyz', { schema: readyzSchema }, async (_request, reply) => {
    const [database, chains] = await Promise.all([
      sql`SELECT 1`.execute(deps.db).then(
        () => ({ ok: true }),
        (error: Error) => ({ ok: false, error: error.message }),
      ),
      deps.chainReadiness(),
    ])
    const ready = database.ok && chains.every((chain) => chain.ok)
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', database, chains })
  })

  app.get(
    '/metrics',
    {
      schema: {
        summary: 'Prometheus metrics',
        tags: ['operations'],
        security: [],
        response: { 200: { description: 'Prometheus text exposition', content: { 'text/plain': { schema: { type: 'string' } } } } },
      },
    },
    async (_request, reply) => reply.type(deps.registry.contentType).send(await deps.registry.metrics()),
  )
}
