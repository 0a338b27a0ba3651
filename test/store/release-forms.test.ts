// The release rule's two forms (release-tracking.ts for one tracking, release-trackings.ts for a batch of
// callback answers) on whichever store the suite runs against: on the same kinds of rows they release
// the same trackings and leave the same rows behind.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import type { Tracking } from '../../src/domain/tracking.ts'
import { createAccount } from '../../src/store/accounts.ts'
import { releaseTracking, type ReleaseItem } from '../../src/store/release-tracking.ts'
import { releaseTrackings } from '../../src/store/release-trackings.ts'
import { findTrackingBySecret, insertTracking } from '../../src/store/trackings.ts'
import { useTestDatabase } from '../support/database.ts'
import { testTracking } from '../support/trackings.ts'

let accountId: string
const database = useTestDatabase(async (db) => {
  accountId = (await createAccount(db, 'release forms')).id
})

/** Every case row's creation time: a row a release leaves alone keeps it in both copies. */
const created = new Date('2026-01-01T00:00:00Z')
const completed = { status: 'success', confirmedAt: new Date('2026-01-01T00:00:00Z') } as const
/** Each kind of row a release can meet, and the `forward_to` the release carries (null: none). */
const cases: { label: string; tracking: Partial<Tracking>; forwardTo: string | null }[] = [
  { label: 'pending', tracking: {}, forwardTo: 'https://shop.example/new' },
  { label: 'success', tracking: completed, forwardTo: null },
  { label: 'success, answer forwards', tracking: completed, forwardTo: 'https://shop.example/new' },
  { label: 'success without forward_to', tracking: { ...completed, forwardTo: null }, forwardTo: null },
  { label: 'failed', tracking: { status: 'failed', failedReason: 'AMOUNT_MISMATCH' }, forwardTo: 'https://shop.example/new' },
  { label: 'released before', tracking: { ...completed, release: true }, forwardTo: 'https://shop.example/new' },
]

/** A fresh set of the cases' rows (plus an id that names no tracking), and their release items. */
async function insertCases(): Promise<{ stored: Tracking[]; items: ReleaseItem[] }> {
  const stored: Tracking[] = []
  for (const { tracking } of cases) {
    const inserted = (await insertTracking(database.db, testTracking(accountId, { createdAt: created, updatedAt: created, ...tracking })))!
    // An insert writes no release (a new tracking is never released): set it as a release would have.
    if (tracking.release) await database.db.updateTable('trackings').set({ release: true }).where('id', '=', inserted.id).execute()
    stored.push({ ...inserted, release: tracking.release ?? false })
  }
  const items = cases.map(({ forwardTo }, i) => ({ id: stored[i]!.id, forwardTo }))
  return { stored, items: [...items, { id: randomUUID(), forwardTo: null }] }
}

/** What a release may change, by case. */
async function after_(
  stored: Tracking[],
): Promise<Record<string, Pick<Tracking, 'status' | 'release' | 'forwardTo' | 'updatedAt' | 'releasedAt'>>> {
  const rows: Record<string, Pick<Tracking, 'status' | 'release' | 'forwardTo' | 'updatedAt' | 'releasedAt'>> = {}
  for (const [i, t] of stored.entries()) {
    const row = (await findTrackingBySecret(database.db, accountId, t.secretId))!
    rows[cases[i]!.label] = {
      status: row.status,
      release: row.release,
      forwardTo: row.forwardTo,
      updatedAt: row.updatedAt,
      releasedAt: row.releasedAt ?? null,
    }
  }
  return rows
}

test('releasing one by one and in one batch release the same trackings and leave the same rows', async () => {
  const now = new Date('2026-02-01T12:00:00.000Z')
  const single = await insertCases()
  const batch = await insertCases()

  const releasedOne: Record<string, string | null> = {}
  for (const [i, item] of single.items.entries()) {
    const result = await releaseTracking(database.db, item.id, now, item.forwardTo === null ? {} : { forwardTo: item.forwardTo })
    if (result?.changed) releasedOne[cases[i]!.label] = result.tracking.forwardTo
  }
  const releasedMany: Record<string, string | null> = {}
  for (const row of await releaseTrackings(database.db, batch.items, now)) {
    releasedMany[cases[batch.stored.findIndex((t) => t.id === row.id)]!.label] = row.forwardTo
  }

  assert.deepEqual(releasedMany, releasedOne)
  assert.deepEqual(Object.keys(releasedOne).sort(), ['failed', 'success', 'success without forward_to', 'success, answer forwards'])
  assert.equal(releasedOne['success, answer forwards'], 'https://shop.example/new')
  assert.equal(releasedOne['success'], 'https://shop.example/thanks')
  const rowsOne = await after_(single.stored)
  assert.deepEqual(await after_(batch.stored), rowsOne)
  assert.deepEqual(rowsOne['pending'], {
    status: 'pending',
    release: false,
    forwardTo: 'https://shop.example/thanks',
    updatedAt: created,
    releasedAt: null,
  })
  assert.equal(rowsOne['success']!.updatedAt.getTime(), now.getTime())
  // The moment of the release is kept (the operator's timeline shows it).
  assert.equal(rowsOne['success']!.releasedAt?.getTime(), now.getTime())
})

test('a release of an unknown, a pending or an already released tracking changes nothing', async () => {
  const now = new Date('2026-02-02T12:00:00.000Z')
  const { stored } = await insertCases()
  assert.equal(await releaseTracking(database.db, randomUUID(), now), undefined)
  assert.equal(await releaseTracking(database.db, stored[0]!.id, now), undefined)
  const again = await releaseTracking(database.db, stored[5]!.id, now, { forwardTo: 'https://shop.example/other' })
  assert.equal(again?.changed, false)
  assert.equal(again?.tracking.forwardTo, 'https://shop.example/thanks')
  assert.deepEqual(await releaseTrackings(database.db, [], now), [])
})
