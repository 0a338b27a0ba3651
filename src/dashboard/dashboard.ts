import type { Subsystem } from '../common/subsystem.ts'
import type { DashboardDeps } from './deps.ts'
import { dashboardRoutes } from './routes.ts'

/** The operator dashboard as a part of the service: routes only (its live streams end with the HTTP server). */
export function createDashboard(deps: DashboardDeps): Subsystem {
  return { name: 'dashboard', publicRoutes: [async (app) => dashboardRoutes(app, deps)] }
}
