import type { Clock } from '../../common/clock.ts'
import type { Subsystem } from '../../common/subsystem.ts'
import { linkAndShopChecks } from '../../payments/link-shop-checks.ts'
import type { Db } from '../../store/database.ts'
import { createAppTokenAuth } from '../app-token-auth.ts'
import { adminAppsRoutes } from './admin-apps.ts'
import { adminLinksShopsRoutes } from './admin-links-shops.ts'
import { appEndpointRoutes } from './app-endpoints.ts'
import { linkPaymentRoutes } from './link-payments.ts'
import { shopifyPaymentRoutes } from './shopify-payments.ts'

/**
 * Links, shops and apps (docs/api.md §5): the admin routes are public ones (they have their own
 * admin-token guard), the rest sit behind the API key and rate limits; a new tracking's link and shop
 * are checked when it is created.
 */
export function accountDataSubsystem(deps: { db: Db; clock: Clock; adminToken: string | null }): Subsystem {
  const authorize = createAppTokenAuth(deps.db, deps.clock)
  return {
    name: 'account data',
    publicRoutes: [
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
