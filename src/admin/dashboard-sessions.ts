import { deleteAllDashboardSessions } from '../store/dashboard-sessions.ts'
import type { AdminDeps } from './admin-deps.ts'

/**
 * "Sign out all sessions" (docs/api.md §6, docs/operations.md "Dashboard"): every dashboard session ends
 * on every node; pages answer the sign-in form at once, open live streams end at their next poll (2 s).
 * Shared by the admin API (`DELETE /admin/dashboard-sessions`) and the dashboard's own button.
 */
export async function signOutAllDashboardSessions(deps: AdminDeps): Promise<{ kind: 'signed-out'; sessions: number }> {
  return { kind: 'signed-out', sessions: await deleteAllDashboardSessions(deps.db) }
}
