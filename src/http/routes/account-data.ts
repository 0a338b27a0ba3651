import type { Clock } from '../../common/clock.ts'
import type { Subsystem } from '../../common/subsystem.ts'
import { linkAndShopChecks } from '../../payments/link-shop-checks.ts'
import type { Db } from '../../store/infrastructure/database.ts'
import { createAppTokenAuth } from '../app-token-auth.ts'
import { adminAppsRoutes } from './admin-apps.ts'
import { adminLinksShopsRoutes } from './admin-links-shops.ts'
import { appEndpointRoutes } from './app-endpoints.ts'
import { linkPaymentRoutes } from './link-payments.ts'
import { shopifyPaymentRoutes } from './shopify-payments.ts'

/**
 * Links, shops and apps (docs/api.md §5): admin routes in the admin scope, the rest behind the API key
 * and rate limits; a new tracking's link and shop
 * are checked when it is created.
 */
export function accountDataSubsystem(deps: { db: Db; clock: Clock }): Subsystem {
  const authorize = createAppTokenAuth(deps.db, deps.clock)
  return {
    name: 'account data',
    adminRoutes: [
      async (app) => {
        await app.register(adminLinksShopsRoutes, deps)
        await app.register(adminAppsRoutes, deps)
      },
    ],
    apiRoutes: [
      async (app) => {
        await app.register(linkPaymentRoutes, { db: deps.db })
        await app.register(shopifyPaymentRoutes, { db: deps.db })
        await app.register(appEndpointRoutes, { db: deps.db, authorize })
      },
    ],
    referenceChecks: [linkAndShopChecks(deps.db)],
  }
}
