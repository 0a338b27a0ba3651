import type { Tracking } from '../domain/tracking.ts'
import type { Db } from './infrastructure/database.ts'
import { createStatementBatcher } from './infrastructure/statement-batcher.ts'
import { findTrackingBySecret, findTrackingsBySecrets, insertTracking, insertTrackings } from './trackings.ts'

/** Statements of concurrent creates and reads of the payments API, batched (see createStatementBatcher). */
export interface TrackingBatches {
  /** As `insertTracking`: the stored tracking, or undefined when one with its identity or secret exists. */
  insert(tracking: Tracking): Promise<Tracking | undefined>
  /** As `findTrackingBySecret`. */
  findBySecret(accountId: string, secretId: string): Promise<Tracking | undefined>
}

/** Rows per statement at most (an insert binds 30 parameters a row). */
const MAX_BATCH = 100

export function createTrackingBatches(db: Db): TrackingBatches {
  const inserts = createStatementBatcher({
    many: (trackings: Tracking[]) => insertTrackings(db, trackings),
    one: (tracking: Tracking) => insertTracking(db, tracking),
    maxBatch: MAX_BATCH,
  })
  const reads = createStatementBatcher({
    many: (keys: { accountId: string; secretId: string }[]) => findTrackingsBySecrets(db, keys),
    one: (key: { accountId: string; secretId: string }) => findTrackingBySecret(db, key.accountId, key.secretId),
    maxBatch: MAX_BATCH,
  })
  return {
    insert: (tracking) => inserts.run(tracking),
    findBySecret: (accountId, secretId) => reads.run({ accountId, secretId }),
  }
}
