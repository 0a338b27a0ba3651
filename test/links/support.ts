// Helpers shared by the link, Shopify and app tests (not a test file itself).
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { completeTracking } from '../../src/store/complete-tracking.ts'
import { findTrackingBySecret } from '../../src/store/trackings.ts'
import type { Tracking } from '../../src/domain/tracking.ts'
import type { TestService } from '../support/service.ts'

export const NATIVE = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE'
export const VERSION = { 'x-api-version': '2025-10' }
/** Tests send bursts of requests with one key: limits high enough not to get in the way. */
export const HIGH_LIMITS = { PAYWATCH_RATE_RPS: '100000', PAYWATCH_RATE_DAILY: '10000000', PAYWATCH_RATE_PARALLEL: '100' }

const randomAddress = () => `0x${randomBytes(20).toString('hex')}`
const randomHash = () => `0x${randomBytes(32).toString('hex')}`

export interface Account {
  accountId: string
  apiKey: string
}

/** A pending tracking created through POST /v2/payments; `fields` adds or overrides body fields. */
export async function track(
  service: TestService,
  account: Account,
  fields: Record<string, unknown> = {},
): Promise<{ secretId: string; status: number; body: Record<string, any>; payload: Record<string, unknown> }> {
  const secretId = `s-${randomBytes(8).toString('hex')}`
  const payload = {
    blockchain: 'ethereum',
    sender: randomAddress(),
    nonce: 0,
    receiver: randomAddress(),
    token: NATIVE,
    amount: '0.5',
    after_block: 0,
    secret_id: secretId,
    callback: 'https://example.com/callback',
    transaction: randomHash(),
    ...fields,
  }
  const res = await service.api(account.apiKey, { method: 'POST', url: '/v2/payments', payload })
  return { secretId, status: res.statusCode, body: res.json(), payload }
}

/** Moves a tracking to success (or failed) the way the chain engine does. */
export async function settle(
  service: TestService,
  account: Account,
  secretId: string,
  at: Date,
  status: 'success' | 'failed' = 'success',
): Promise<Tracking> {
  const tracking = await findTrackingBySecret(service.database.db, account.accountId, secretId)
  assert.ok(tracking, `no tracking ${secretId}`)
  const done = await completeTracking(
    service.database.db,
    tracking.id,
    status === 'success' ? { status, transaction: tracking.transaction! } : { status, failedReason: 'AMOUNT_MISMATCH' },
    at,
  )
  assert.ok(done)
  return done
}

export async function createLink(service: TestService, accountId: string): Promise<string> {
  const res = await service.admin({ method: 'POST', url: `/admin/accounts/${accountId}/links`, payload: { name: 'donations' } })
  assert.equal(res.statusCode, 201, res.body)
  return res.json<{ id: string }>().id
}

export async function connectShop(service: TestService, accountId: string, shop: string): Promise<void> {
  const res = await service.admin({ method: 'POST', url: `/admin/accounts/${accountId}/shops`, payload: { shop } })
  assert.equal(res.statusCode, 201, res.body)
  assert.equal(res.json<{ shop: string }>().shop, shop)
}

/** Asserts a problem+json answer with the given status and code; returns its body. */
export function assertProblem(
  res: { statusCode: number; headers: Record<string, unknown>; body: string; json: () => any },
  status: number,
  code: string,
): Record<string, any> {
  assert.equal(res.statusCode, status, res.body)
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/)
  const body = res.json()
  assert.equal(body.code, code, res.body)
  assert.equal(body.status, status)
  return body
}
