// The overview's chart cache: final buckets are read once, later requests read only the recent rows,
// and what they return together equals a full read.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { bucketCache } from '../../src/dashboard/chart-cache.ts'

test('final buckets are kept; each request reads from the last final bucket on; the result equals a full read', async () => {
  const minute = 60_000
  const t0 = Date.UTC(2026, 0, 1, 12, 0)
  // One row per minute bucket, value = the minute's index; rows appear as time passes.
  let now = t0 + 30 * minute
  const reads: number[] = []
  const rowsUpTo = (since: number) => {
    const out: { at: Date; count: number }[] = []
    for (let at = since; at <= now; at += minute) out.push({ at: new Date(at), count: (at - t0) / minute })
    return out
  }
  const cached = bucketCache(60, async (since) => {
    reads.push((since.getTime() - t0) / minute)
    return rowsUpTo(since.getTime())
  })
  const windowStart = new Date(t0)

  const first = await cached(windowStart, new Date(now))
  assert.deepEqual(
    first.map((r) => r.count),
    rowsUpTo(t0).map((r) => r.count),
  )
  now += 5 * minute
  const second = await cached(windowStart, new Date(now))
  assert.deepEqual(
    second.map((r) => r.count),
    rowsUpTo(t0).map((r) => r.count),
  )
  // The first read covered everything; the second only from the buckets not final then (30 − 2 min settle).
  assert.deepEqual(reads, [0, 28])

  // The window moves on: buckets before its start are dropped.
  const later = new Date(t0 + 10 * minute)
  const third = await cached(later, new Date(now))
  assert.equal(third[0]!.count, 10)
  assert.equal(third.length, 26)
})
