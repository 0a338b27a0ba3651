import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import type { Registry } from 'prom-client'
import type { Db } from '../../store/database.ts'
import type { ChainReadiness } from '../../common/readiness.ts'

export interface HealthRoutesDeps {
  db: Db
  registry: Registry
  /** Each tracked chain's state; the chain engine reports head ages, else the RPC is asked for its head. */
  chainReadiness: () => Promise<ChainReadiness[]>
}

export async function healthRoutes(app: FastifyInstance, deps: HealthRoutesDeps): Promise<void> {
  app.get('/healthz', { schema: { summary: 'Liveness', tags: ['operations'] } }, async () => ({ status: 'ok' }))

  app.get('/readyz', { schema: { summary: 'Readiness: database and each chain', tags: ['operations'] } }, async (_request, reply) => {
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

  app.get('/metrics', { schema: { summary: 'Prometheus metrics', tags: ['operations'] } }, async (_request, reply) =>
    reply.type(deps.registry.contentType).send(await deps.registry.metrics()),
  )
}
