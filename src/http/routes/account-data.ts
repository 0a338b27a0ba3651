import type { FastifyPluginAsync } from 'fastify'
import type { Clock } from '../../common/clock.ts'
import type { Db } from '../../store/database.ts'
import { createAppTokenAuth } from '../app-token-auth.ts'
import { adminAppsRoutes } from './admin-apps.ts'
import { adminLinksShopsRoutes } from './admin-links-shops.ts'
import { appEndpointRoutes } from './app-endpoints.ts'
import { linkPaymentRoutes } from './link-payments.ts'
import { shopifyPaymentRoutes } from './shopify-payments.ts'

/**
 * Links, shops and apps (issue 5): `admin` goes with the public plugins (it has its own admin-token
 * guard), `api` behind the API key and rate limits.
 */
export function accountDataPlugins(deps: { db: Db; clock: Clock; adminToken: string | null }): { admin: FastifyPluginAsync; api: FastifyPluginAsync } {
  const authorize = createAppTokenAuth(deps.db, deps.clock)
  return {
    admin: async (app) => {
      await app.register(adminLinksShopsRoutes, deps)
      await app.register(adminAppsRoutes, deps)
    },
    api: async (app) => {
      await app.register(linkPaymentRoutes, { db: deps.db })
      await app.register(shopifyPaymentRoutes, { db: deps.db })
      await app.register(appEndpointRoutes, { db: deps.db, authorize })
    },
  }
}
