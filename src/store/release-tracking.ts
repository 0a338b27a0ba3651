import { sql, type RawBuilder } from 'kysely'
import type { Tracking } from '../domain/tracking.ts'
import type { Db } from './infrastructure/database.ts'
import { rowToTracking, type TrackingRow } from './trackings.ts'

/** A tracking to release, and a callback answer's `forward_to` to replace the record's (null keeps it). */
export interface ReleaseItem {
  id: string
  forwardTo: string | null
  /** The delivery whose answer releases it (with `appliedDeliveries`). */
  deliveryId?: string
}

/**
 * The release rule (docs/api.md §4), as the one statement of both forms, `releaseTracking` here and
 * `releaseTrackings` (release-trackings.ts), so they cannot drift: the waiting user of a completed
 * tracking not yet released is released now; `forward_to` is replaced when the item carries one.
 * A pending tracking (nothing to release yet) and one released before are left as they are.
 * `appliedDeliveries`: a query of delivery ids (a part of a larger statement, attempt-records.ts); an item
 * is released only when its delivery is among them.
 */
export function releaseStatement<Row>(
  items: readonly ReleaseItem[],
  now: Date,
  returning: RawBuilder<unknown>,
  appliedDeliveries?: RawBuilder<unknown>,
): RawBuilder<Row> {
  const values = items.map((item) => sql`(${item.id}::text, ${item.forwardTo}::text, ${item.deliveryId ?? null}::text)`)
  return sql<Row>`
    UPDATE trackings AS t SET release = true, released_at = ${now}, updated_at = ${now}, forward_to = COALESCE(v.forward_to, t.forward_to)
    FROM (VALUES ${sql.join(values)}) AS v(id, forward_to, delivery_id)
    WHERE t.id = v.id AND t.status <> 'pending' AND t.release = false
      ${appliedDeliveries ? sql`AND v.delivery_id IN (${appliedDeliveries})` : sql``}
    RETURNING ${returning}`
}

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
  const updated = await releaseStatement<TrackingRow>([{ id, forwardTo: options.forwardTo ?? null }], now, sql`t.*`).execute(db)
  if (updated.rows[0]) return { tracking: rowToTracking(updated.rows[0]), changed: true }
  const row = await db.selectFrom('trackings').selectAll().where('id', '=', id).where('status', '!=', 'pending').executeTakeFirst()
  return row && { tracking: rowToTracking(row), changed: false }
}
