import { randomBytes, randomUUID } from 'node:crypto'
import type { Tracking } from '../../src/domain/tracking.ts'
import type { Db } from '../../src/store/infrastructure/database.ts'
import { insertTracking } from '../../src/store/trackings.ts'

export const randomAddress = (): string => `0x${randomBytes(20).toString('hex')}`
export const randomHash = (): string => `0x${randomBytes(32).toString('hex')}`

/** How many of the account's trackings are still pending. */
export async function pendingOfAccount(db: Db, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('trackings')
    .select(({ fn }) => fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId)
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/**
 * Stores a pending tracking directly, as POST /v2/payments would after its chain checks: for tests
 * of what happens after creation (release, widget channel) without a chain behind the service.
 */
export async function insertTestTracking(db: Db, accountId: string, overrides: Partial<Tracking> = {}): Promise<Tracking> {
  const stored = await insertTracking(db, testTracking(accountId, overrides))
  if (!stored) throw new Error('insertTestTracking: the tracking conflicts with an existing one')
  return stored
}

/** A pending tracking with test defaults, not stored. */
export function testTracking(accountId: string, overrides: Partial<Tracking> = {}): Tracking {
  const now = new Date()
  return {
    id: randomUUID(),
    accountId,
    secretId: randomUUID(),
    shape: 'current',
    blockchain: 'ethereum',
    sender: randomAddress(),
    nonce: 7n,
    receiver: randomAddress(),
    token: '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee',
    decimals: 18,
    commitment: 'confirmed',
    confirmations: 2,
    afterBlock: 100n,
    deadline: null,
    nonceless: false,
    amount: '1.5',
    feeAmount: null,
    feeReceiver: null,
    transaction: randomHash(),
    payload: null,
    callback: null,
    forwardTo: 'https://shop.example/thanks',
    forwardOnFailure: false,
    integrationId: null,
    linkId: null,
    shop: null,
    shopifyPaymentId: null,
    status: 'pending',
    failedReason: null,
    release: false,
    confirmedAt: null,
    createdAt: now,
    updatedAt: now,
    ...overrides,
  }
}

/**
 * Sets a tracking's `deadline` column (migration 0026) directly: the widget channel's second identifier
 * finds trackings by it, whether POST /v2/payments stored it or not.
 */
export async function setTrackingDeadline(db: Db, trackingId: string, deadline: bigint | number): Promise<void> {
  await db.updateTable('trackings').set({ deadline: deadline.toString() }).where('id', '=', trackingId).execute()
}

/** A pending tracking with a deadline, stored directly (see insertTestTracking). */
export async function insertDeadlineTracking(
  db: Db,
  accountId: string,
  deadline: bigint | number,
  overrides: Partial<Tracking> = {},
): Promise<Tracking> {
  const stored = await insertTestTracking(db, accountId, overrides)
  await setTrackingDeadline(db, stored.id, deadline)
  return stored
}
