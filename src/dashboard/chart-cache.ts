import type { Db } from '../store/infrastructure/database.ts'
import { callbackLatencyPerBucket, completedPerBucket, type CountBucket, type LatencyBucket } from '../store/dashboard-charts.ts'

/**
 * A bucket's rows are all written a little after it ends (a completion is stamped when it is written;
 * an attempt with its start, at most the callback time-out before it is recorded): after this long the
 * bucket is final.
 */
const SETTLE_MS = 2 * 60_000

/**
 * Chart buckets computed once: the buckets that are final are kept, and each request reads only the
 * rows since the last final bucket. So the overview's cost follows the last few minutes, not the hours
 * it shows (at a hundred thousand payments in three hours, a full read costs hundreds of milliseconds),
 * and a busy live overview refreshing every second does not read the same rows again.
 */
export function bucketCache<Row extends { at: Date }>(bucketSeconds: number, read: (since: Date) => Promise<Row[]>) {
  const bucketMs = bucketSeconds * 1000
  const final = new Map<number, Row>()
  let finalUntil = 0
  return async (windowStart: Date, now: Date): Promise<Row[]> => {
    const start = windowStart.getTime()
    const from = Math.max(start, finalUntil)
    const rows = await read(new Date(from))
    const settled = Math.floor((now.getTime() - SETTLE_MS) / bucketMs) * bucketMs
    for (const row of rows) if (row.at.getTime() < settled) final.set(row.at.getTime(), row)
    if (settled > from) finalUntil = settled
    for (const at of final.keys()) if (at < start) final.delete(at)
    const kept = [...final.values()].filter((row) => row.at.getTime() < from)
    return [...kept, ...rows].sort((a, b) => a.at.getTime() - b.at.getTime())
  }
}

export function createChartCache(db: Db, countBucketSeconds: number, latencyBucketSeconds: number) {
  return {
    completed: bucketCache<CountBucket>(countBucketSeconds, (since) => completedPerBucket(db, since, countBucketSeconds)),
    latency: bucketCache<LatencyBucket>(latencyBucketSeconds, (since) => callbackLatencyPerBucket(db, since, latencyBucketSeconds)),
  }
}

export type ChartCache = ReturnType<typeof createChartCache>
