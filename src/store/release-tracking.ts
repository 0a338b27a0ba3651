import type { Tracking } from '../domain/tracking.ts'
import type { Db } from './database.ts'
import { rowToTracking } from './trackings.ts'

/**
 * Marks the waiting user released (callback answered 200, or POST /v2/payments/release). Only a
 * completed tracking is released; `forwardTo`, when given (a callback answer's `forward_to`),
 * replaces the record's. Returns the tracking with `changed` false when it was released already.
 */
export async function releaseTracking(
  db: Db,
  id: string,
  now: Date,
  options: { forwardTo?: string } = {},
): Promise<{ tracking: Tracking; changed: boolean } | undefined> {
  const updated = await db
    .updateTable('trackings')
    .set({ release: true, updated_at: now, ...(options.forwardTo !== undefined ? { forward_to: options.forwardTo } : {}) })
    .where('id', '=', id)
    .where('status', '!=', 'pending')
    .where('release', '=', false)
    .returningAll()
    .executeTakeFirst()
  if (updated) return { tracking: rowToTracking(updated), changed: true }
  const row = await db.selectFrom('trackings').selectAll().where('id', '=', id).where('status', '!=', 'pending').executeTakeFirst()
  return row && { tracking: rowToTracking(row), changed: false }
}
